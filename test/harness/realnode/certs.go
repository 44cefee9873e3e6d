//go:build linux

package realnode

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// File names envtest's API server reads from its CertDir; when apiserver.crt exists envtest
// uses the files as they are instead of making its own.
const (
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saKeyFile       = "sa-signer.key"
	saPublicFile    = "sa-signer.crt"
	// CAFile is the CA of the serving certificate, written next to it for the kubelet, the
	// controller-manager (--root-ca-file, so pods trust the API server) and clients.
	CAFile = "serving-ca.crt"
	// The kubelet trusts kubeletClientCAFile for clients; the API server presents the
	// certificate it signed (--kubelet-client-certificate) for logs, exec and the node proxy.
	kubeletClientCAFile   = "kubelet-client-ca.crt"
	kubeletClientCertFile = "kubelet-client.crt"
	kubeletClientKeyFile  = "kubelet-client.key"
)

// writeServingCerts gives the API server a serving certificate that pods can verify: envtest's
// own names only localhost and the listen address, while pods reach the API server as
// https://10.0.0.1 (the "kubernetes" Service) or kubernetes.default.svc. It also writes the
// ServiceAccount signing key and tells envtest which CA clients must trust.
func writeServingCerts(s *envtest.APIServer) error {
	if s.CertDir == "" {
		return errors.New("the API server has no CertDir")
	}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(NodeIP), net.ParseIP(APIServiceIP)}
	names := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("kube-apiserver", ips, names)
	if err != nil {
		return fmt.Errorf("generating the serving certificate: %w", err)
	}
	// The bundle holds the serving certificate, then the CA that signed it.
	_, rest := pem.Decode(certPEM)
	caBlock, _ := pem.Decode(rest)
	if caBlock == nil {
		return errors.New("the generated bundle holds no CA certificate")
	}
	caPEM := pem.EncodeToMemory(caBlock)
	saKey, saPublic, err := serviceAccountKeys()
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		servingCertFile: certPEM, servingKeyFile: keyPEM, CAFile: caPEM, saKeyFile: saKey, saPublicFile: saPublic,
	} {
		if err := os.WriteFile(filepath.Join(s.CertDir, name), data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	s.CA = caPEM
	return nil
}

// serviceAccountKeys returns a new RSA key for signing ServiceAccount tokens and its public
// half, both PEM.
func serviceAccountKeys() (private, public []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the ServiceAccount key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the ServiceAccount public key: %w", err)
	}
	private = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	public = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return private, public, nil
}

// writeKubeletClientCerts writes a CA for the kubelet's client authentication and the client
// certificate the API server uses towards the kubelet, both into dir. Without them the API
// server cannot reach the kubelet's API: no pod logs, no exec, no node proxy.
func writeKubeletClientCerts(dir string) error {
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the kubelet client CA key: %w", err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "kubelet-client-ca"}, caKey)
	if err != nil {
		return fmt.Errorf("generating the kubelet client CA: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the kubelet client key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore:    ca.NotBefore,
		NotAfter:     ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing the kubelet client certificate: %w", err)
	}
	for name, data := range map[string][]byte{
		kubeletClientCAFile:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}),
		kubeletClientCertFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		kubeletClientKeyFile:  pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
