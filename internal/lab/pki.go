package lab

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The lab's credentials. Every lab gets new ones: a CA that signs the
// apiserver's serving certificate (so kubeconfigs verify the server instead
// of skipping TLS checks), a service-account signing key, and one bearer
// token per identity in a token file. Authorization is real RBAC: the admin
// is in system:masters, kube-controller-manager and kube-scheduler run as
// the users the bootstrap RBAC policy grants their rights to
// (system:kube-controller-manager, system:kube-scheduler), and every other
// request is judged by RBAC as on any cluster.

// identity is one user of the token file.
type identity struct {
	user   string
	groups []string
}

// identities are the users of the token file, by the kubeconfig they get.
var identities = map[string]identity{
	"admin":                   {user: "ladder-admin", groups: []string{"system:masters"}},
	string(ControllerManager): {user: "system:kube-controller-manager"},
	string(Scheduler):         {user: "system:kube-scheduler"},
	// KWOK writes every managed node's and pod's status and the nodes'
	// leases; there is no bootstrap role for that, so it is an admin.
	string(Kwok): {user: "ladder-kwok", groups: []string{"system:masters"}},
}

// layout is where a lab keeps its files inside its directory.
type layout struct{ dir string }

func (l layout) state() string      { return filepath.Join(l.dir, "lab.json") }
func (l layout) lock() string       { return filepath.Join(l.dir, "lab.lock") }
func (l layout) kubeconfig() string { return filepath.Join(l.dir, "kubeconfig") }
func (l layout) logs() string       { return filepath.Join(l.dir, "logs") }
func (l layout) log(c Component) string {
	return filepath.Join(l.logs(), string(c)+".log")
}
func (l layout) etcdData() string  { return filepath.Join(l.dir, "etcd") }
func (l layout) pki() string       { return filepath.Join(l.dir, "pki") }
func (l layout) caCert() string    { return filepath.Join(l.pki(), "ca.crt") }
func (l layout) caKey() string     { return filepath.Join(l.pki(), "ca.key") }
func (l layout) serveCert() string { return filepath.Join(l.pki(), "apiserver.crt") }
func (l layout) serveKey() string  { return filepath.Join(l.pki(), "apiserver.key") }
func (l layout) saKey() string     { return filepath.Join(l.pki(), "sa.key") }
func (l layout) saPub() string     { return filepath.Join(l.pki(), "sa.pub") }
func (l layout) tokens() string    { return filepath.Join(l.pki(), "tokens.csv") }
func (l layout) adminToken() string {
	return filepath.Join(l.pki(), "admin.token")
}
func (l layout) componentKubeconfig(c Component) string {
	return filepath.Join(l.pki(), string(c)+".kubeconfig")
}

// serviceCIDR is the lab's service network: EKS's default (it picks
// 172.20.0.0/16 unless the VPC overlaps it), so EKS manifests with a fixed
// clusterIP, kube-dns's 172.20.0.10 first, apply as they are. Its first
// address is the kubernetes Service's, which the serving certificate names.
// A scenario on another range can add it with a networking.k8s.io/v1
// ServiceCIDR object.
const (
	serviceCIDR      = "172.20.0.0/16"
	kubernetesSvcIP  = "172.20.0.1"
	certificateYears = 1
)

// writeCredentials creates the lab's pki directory and kubeconfigs for an
// apiserver at server.
func writeCredentials(l layout, server string) error {
	if err := os.MkdirAll(l.pki(), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", l.pki(), err)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "ladder-lab-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(certificateYears, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("creating the lab CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	serveKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serveTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(certificateYears, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(kubernetesSvcIP)},
	}
	serveDER, err := x509.CreateCertificate(rand.Reader, serveTmpl, ca, &serveKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("creating the apiserver certificate: %w", err)
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caPEM := pemBlock("CERTIFICATE", caDER)
	files := map[string][]byte{
		l.caCert():    caPEM,
		l.caKey():     mustECKeyPEM(caKey),
		l.serveCert(): pemBlock("CERTIFICATE", serveDER),
		l.serveKey():  mustECKeyPEM(serveKey),
		l.saKey():     mustECKeyPEM(saKey),
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	files[l.saPub()] = pemBlock("PUBLIC KEY", saPub)

	// The token file: token,user,uid,"group1,group2".
	var csv strings.Builder
	tokens := map[string]string{}
	for _, name := range []string{"admin", string(ControllerManager), string(Scheduler), string(Kwok)} {
		id := identities[name]
		tok := randomToken()
		tokens[name] = tok
		fmt.Fprintf(&csv, "%s,%s,%s,%q\n", tok, id.user, id.user, strings.Join(id.groups, ","))
	}
	files[l.tokens()] = []byte(csv.String())
	files[l.adminToken()] = []byte(tokens["admin"])
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := writeKubeconfig(l.kubeconfig(), server, caPEM, "ladder-admin", tokens["admin"]); err != nil {
		return err
	}
	for _, c := range []Component{ControllerManager, Scheduler, Kwok} {
		if err := writeKubeconfig(l.componentKubeconfig(c), server, caPEM, identities[string(c)].user, tokens[string(c)]); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig writes a kubeconfig for one user of the lab, with the CA
// inline so the file works wherever it is copied.
func writeKubeconfig(path, server string, caPEM []byte, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["ladder-lab"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["ladder-lab"] = &clientcmdapi.Context{Cluster: "ladder-lab", AuthInfo: user}
	cfg.CurrentContext = "ladder-lab"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing the kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func mustECKeyPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		// Only fails for curves x509 does not know; P-256 is one it does.
		panic(err)
	}
	return pemBlock("EC PRIVATE KEY", der)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return n
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}
