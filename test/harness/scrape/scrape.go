// Package scrape reads the manager's secure metrics endpoint as Prometheus would: over HTTPS,
// with a ServiceAccount's bearer token (test/e2e, test/nodee2e).
package scrape

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// httpClient talks HTTPS to the metrics endpoint, whose certificate is self-signed unless one
// is mounted: the tests check who may read, not the certificate.
var httpClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed test server
}

// Metrics GETs https://addr/metrics with token (none if "") and returns the status code and
// the body. err is set when the server could not be reached or the body not read.
func Metrics(ctx context.Context, addr, token string) (code int, body string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, "", fmt.Errorf("reading the metrics of %s: %w", addr, err)
	}
	return resp.StatusCode, string(data), nil
}

// Token creates the ServiceAccount namespace/name and returns a token of it, valid for 10
// minutes.
func Token(ctx context.Context, c client.Client, namespace, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Create(ctx, sa); err != nil {
		return "", fmt.Errorf("creating ServiceAccount %s/%s: %w", namespace, name, err)
	}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if err := c.SubResource("token").Create(ctx, sa, request); err != nil {
		return "", fmt.Errorf("requesting a token of %s/%s: %w", namespace, name, err)
	}
	if request.Status.Token == "" {
		return "", fmt.Errorf("the token of %s/%s is empty", namespace, name)
	}
	return request.Status.Token, nil
}
