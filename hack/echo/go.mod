// The Echo image's module: /bin/sh of the image the Jobs of Echo and ScheduledEcho run (the
// operator's ECHO_IMAGE), a POSIX shell built on mvdan.cc/sh's interpreter, static. Apart from
// the operator's go.mod on purpose: the shell is the operand's, not the manager's. Build with
// GOWORK=off (the Makefile's echo-sh).
module github.com/seed1b407122/database-operator/hack/echo

go 1.26.0

require mvdan.cc/sh/v3 v3.14.1

require (
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/term v0.45.0 // indirect
)
