package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// versionOf parses "pkg.vX.Y.Z".
func versionOf(name string) (semver.Version, error) {
	_, v, _ := strings.Cut(name, ".v")
	return semver.Parse(v)
}

func TestStranded(t *testing.T) {
	e := func(name, replaces, skipRange string, skips ...string) declcfg.ChannelEntry {
		return declcfg.ChannelEntry{Name: name, Replaces: replaces, SkipRange: skipRange, Skips: skips}
	}
	for _, tc := range []struct {
		name    string
		entries []declcfg.ChannelEntry
		want    []string
	}{
		{"a replaces chain", []declcfg.ChannelEntry{
			e("p.v0.2.0", "p.v0.1.0", ""), e("p.v0.3.0", "p.v0.2.0", ""), e("p.v0.4.0", "p.v0.3.0", ""),
		}, nil},
		{"the head's skipRange alone", []declcfg.ChannelEntry{
			e("p.v0.2.0", "", ""), e("p.v0.3.0", "", ""), e("p.v0.4.0", "", "<0.4.0"),
		}, nil},
		{"skips", []declcfg.ChannelEntry{e("p.v0.2.0", "", ""), e("p.v0.4.0", "", "", "p.v0.2.0")}, nil},
		{"a broken link strands every older entry", []declcfg.ChannelEntry{
			e("p.v0.2.0", "", ""), e("p.v0.3.0", "p.v0.2.0", "<0.3.0"), e("p.v0.4.0", "p.v0.3.1", ""),
		}, []string{"p.v0.2.0", "p.v0.3.0"}},
		{"a skipRange that leaves the oldest out", []declcfg.ChannelEntry{
			e("p.v0.2.0", "", ""), e("p.v0.3.0", "", ""), e("p.v0.4.0", "", ">=0.3.0 <0.4.0"),
		}, []string{"p.v0.2.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Stranded(tc.entries, tc.entries[len(tc.entries)-1].Name, versionOf)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("stranded %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := Stranded([]declcfg.ChannelEntry{e("p.v0.1.0", "", ""), e("p.v0.2.0", "", "<<0.2")}, "p.v0.2.0", versionOf); err == nil {
		t.Error("a skipRange that does not parse: no error")
	}
}
