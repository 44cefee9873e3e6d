package controlplane

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func TestSetFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flags   []string
		want    []string
		wantErr bool
	}{
		{name: "replaces a default", flags: []string{"--service-cluster-ip-range=10.96.0.0/16"},
			want: []string{"--audit-log-path=x", "--service-cluster-ip-range=10.96.0.0/16"}},
		{name: "adds a flag, value with =", flags: []string{"--runtime-config=api/all=true"},
			want: []string{"--audit-log-path=x", "--runtime-config=api/all=true", "--service-cluster-ip-range=10.0.0.0/24"}},
		{name: "bare flag is true", flags: []string{"--profiling"},
			want: []string{"--audit-log-path=x", "--profiling=true", "--service-cluster-ip-range=10.0.0.0/24"}},
		{name: "last value wins", flags: []string{"--audit-log-path=a", "--audit-log-path=b"},
			want: []string{"--audit-log-path=b", "--service-cluster-ip-range=10.0.0.0/24"}},
		{name: "no dashes", flags: []string{"service-cluster-ip-range=10.96.0.0/16"}, wantErr: true},
		{name: "single dash", flags: []string{"-v=2"}, wantErr: true},
		{name: "no name", flags: []string{"--=x"}, wantErr: true},
		{name: "nothing", flags: []string{"--"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := envtest.EmptyArguments().
				Set("service-cluster-ip-range", "10.0.0.0/24").
				Set("audit-log-path", "x")
			err := setFlags(args, tc.flags)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("setFlags(%q) = nil, want an error", tc.flags)
				}
				return
			}
			if err != nil {
				t.Fatalf("setFlags(%q): %v", tc.flags, err)
			}
			got := args.AsStrings(nil)
			if len(got) != len(tc.want) {
				t.Fatalf("flags %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("flags %q, want %q", got, tc.want)
				}
			}
		})
	}
}
