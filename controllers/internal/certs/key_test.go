// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"testing"
)

func TestParsePrivateKey(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	encode := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	for _, tc := range []struct {
		name    string
		keyPEM  []byte
		wantKey string
		wantErr string
	}{
		{"PKCS#8", encode("PRIVATE KEY", pkcs8), "*ecdsa.PrivateKey", ""},
		{"SEC 1", encode("EC PRIVATE KEY", sec1), "*ecdsa.PrivateKey", ""},
		{"PKCS#1", encode("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), "*rsa.PrivateKey", ""},
		{"after a certificate block", append(encode("CERTIFICATE", []byte("x")), encode("PRIVATE KEY", pkcs8)...), "*ecdsa.PrivateKey", ""},
		{"SEC 1 bytes in a PKCS#8 block", encode("PRIVATE KEY", sec1), "", "the PRIVATE KEY block is not a PKCS#8 key"},
		{"PKCS#8 bytes in a SEC 1 block", encode("EC PRIVATE KEY", pkcs8), "", "the EC PRIVATE KEY block is not a SEC 1 key"},
		{"no key block", encode("CERTIFICATE", []byte("x")), "", "no PEM private key"},
		{"not PEM", []byte("key"), "", "no PEM private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := parsePrivateKey(tc.keyPEM)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotKey := fmt.Sprintf("%T", key); (tc.wantKey != "" && gotKey != tc.wantKey) || gotErr != tc.wantErr {
				t.Errorf("parsePrivateKey = %T, %q; want %s, %q", key, gotErr, tc.wantKey, tc.wantErr)
			}
		})
	}
}
