// Command coredns is CoreDNS built with the plugins the real-node tier's Corefile uses
// (test/harness/realnode/dns.go) and no others: upstream's main links every plugin (cloud DNS
// providers, tracing exporters and all) and costs minutes to build cold; this one builds only
// what runs. The directives keep upstream's execution order (core/dnsserver/zdirectives.go).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// directives lists the linked plugins in upstream's order.
var directives = []string{"reload", "ready", "errors", "cache", "kubernetes", "loop"}

func main() {
	if err := dnsserver.SetDirectives(directives); err != nil {
		panic(err)
	}
	coremain.Run()
}
