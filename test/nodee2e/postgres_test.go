//go:build linux && node

package nodee2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

const (
	postgresSampleFile = "database_v1alpha1_databasecluster_postgres.yaml"
	// postgresRows are written before the backup and must all come back; postgresLateRows are
	// written after it and must not.
	postgresRows     = 1000
	postgresLateRows = 100
	// postgresExporterPort is where the sample's sidecar serves its metrics.
	postgresExporterPort = "9187"
)

// postgresStory, one ordered story: the PostgreSQL sample as it is, on the project's image of
// Debian's PostgreSQL 15 (pulled from the node's registry), reached by a real PostgreSQL client
// (pgx) over TLS with the server's name verified against the cluster's CA; its exporter sidecar
// runs; a configuration change rolls the pod; an Offline backup is restored into the cluster
// created again, with the original password, and every row is read back.
func postgresStory() {
	var (
		dc       *databasev1alpha1.DatabaseCluster
		username string
		password string
	)

	It("runs the PostgreSQL sample as it is: TLS with the operator's certificate, the generated password, the exporter sidecar", func(ctx SpecContext) {
		ns := newNamespace(ctx, "postgres")
		dc = sampleCluster(ns, postgresSampleFile)
		Expect(dc.Spec.Image).To(Equal(requireEnv("POSTGRES_IMAGE")), "the sample names the project's PostgreSQL image")
		Expect(dc.Spec.Credentials).NotTo(BeNil())
		Expect(dc.Spec.TLS).NotTo(BeNil())
		Expect(dc.Spec.Sidecars).To(HaveLen(1))
		// The sample keeps its claim when deleted (the default Retain); the restore below needs
		// the data gone with the cluster.
		Expect(dc.Spec.PVCRetentionPolicy).To(BeNil(), "the sample sets a claim retention policy now: say so here")
		dc.Spec.PVCRetentionPolicy = &databasev1alpha1.PVCRetentionPolicy{WhenDeleted: databasev1alpha1.DeletePVC}
		began := time.Now()
		Expect(k8s.Create(ctx, dc)).To(Succeed())
		report("PostgreSQL sample: create -> Available (initdb on the first start, real node)", waitAvailable(ctx, dc, began))
		expectRunsImage(ctx, dc, registryImage("POSTGRES_IMAGE"))
		expectSidecarRunning(ctx, dc)

		username, password = postgresCredentials(ctx, dc, dc.GeneratedCredentialsName())
		Expect(username).To(Equal("admin"))
		Expect(password).To(HaveLen(32))

		db := pgConnect(ctx, dc, username, password)
		defer func() { _ = db.Close(ctx) }()
		// The connection is TLS, with the certificate of NAME-tls, and PostgreSQL says so too.
		state, ok := db.PgConn().Conn().(*tls.Conn)
		Expect(ok).To(BeTrue(), "the connection is not TLS")
		Expect(state.ConnectionState().PeerCertificates[0].Raw).To(Equal(leafCertificate(servingSecret(ctx, dc)[corev1.TLSCertKey]).Raw))
		var ssl bool
		Expect(db.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl)).To(Succeed())
		Expect(ssl).To(BeTrue())
		Expect(pgSetting(ctx, db, "ssl")).To(Equal("on"))
		Expect(pgSetting(ctx, db, "data_directory")).To(Equal("/var/lib/database/pgdata"))
		// pg_hba.conf of the sample: no TCP without TLS, no wrong password, no other CA.
		expectRefused(ctx, dc, "sslmode=disable", username, password, nil, "no encryption")
		expectRefused(ctx, dc, "sslmode=verify-full", username, "wrong", caPool(servingSecret(ctx, dc)), "password authentication failed")
		expectRefused(ctx, dc, "sslmode=verify-full", username, password, x509.NewCertPool(), "certificate signed by unknown authority")

		began = time.Now()
		_, err := db.Exec(ctx, "CREATE TABLE items (id integer PRIMARY KEY, value text NOT NULL)")
		Expect(err).NotTo(HaveOccurred())
		rows := make([][]any, postgresRows)
		for i := range rows {
			rows[i] = []any{i, postgresValue(i)}
		}
		n, err := db.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"id", "value"}, pgx.CopyFromRows(rows))
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeEquivalentTo(postgresRows))
		report(fmt.Sprintf("PostgreSQL: %d rows written over TLS through the client Service", postgresRows), time.Since(began))
		expectRows(ctx, db, postgresRows)
		expectExporterUp(ctx, dc)
	}, NodeTimeout(6*time.Minute))

	It("rolls a configuration change: a new checksum, the pod replaced, the setting in effect, every row kept", func(ctx SpecContext) {
		oldChecksum := statefulSet(ctx, Default, dc).Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]
		Expect(oldChecksum).NotTo(BeEmpty())
		before := podsOf(ctx, dc)[dc.StatefulSetName()+"-0"]
		Expect(dc.Spec.Config.Files["postgresql.conf"]).To(ContainSubstring("work_mem = '4MB'"), "the sample's setting")
		began := time.Now()
		update(ctx, dc, func(dc *databasev1alpha1.DatabaseCluster) {
			conf := dc.Spec.Config.Files["postgresql.conf"]
			dc.Spec.Config.Files["postgresql.conf"] = strings.Replace(conf, "work_mem = '4MB'", "work_mem = '16MB'", 1)
		})
		Eventually(func(g Gomega) {
			sts := statefulSet(ctx, g, dc)
			g.Expect(sts.Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]).NotTo(Equal(oldChecksum))
			pod, ok := podsOf(ctx, dc)[dc.StatefulSetName()+"-0"]
			g.Expect(ok).To(BeTrue())
			g.Expect(pod.UID).NotTo(Equal(before.UID))
			g.Expect(pod.Annotations[databasev1alpha1.InputsChecksumAnnotation]).To(Equal(sts.Spec.Template.Annotations[databasev1alpha1.InputsChecksumAnnotation]))
		}).WithContext(ctx).Should(Succeed())
		waitAvailable(ctx, dc, began)
		report("PostgreSQL: spec.config changed (work_mem) -> pod rolled, Available", time.Since(began))
		db := pgConnect(ctx, dc, username, password)
		defer func() { _ = db.Close(ctx) }()
		Expect(pgSetting(ctx, db, "work_mem")).To(Equal("16MB"))
		expectRows(ctx, db, postgresRows)
		expectExporterUp(ctx, dc)
	}, NodeTimeout(5*time.Minute))

	It("restores an Offline backup into the cluster created again, with the original's password: every row back, none written after", func(ctx SpecContext) {
		// The restored cluster needs the password the data was initialized with: the Secret
		// NAME-credentials goes with the cluster (garbage collection), so it is kept as a Secret
		// of the user's, which spec.credentials.secretName names.
		kept := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: dc.Name + "-original-credentials"},
			Type:       corev1.SecretTypeBasicAuth,
			StringData: map[string]string{databasev1alpha1.UsernameKey: username, databasev1alpha1.PasswordKey: password},
		}
		Expect(k8s.Create(ctx, kept)).To(Succeed())

		backup := &databasev1alpha1.DatabaseBackup{
			ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: dc.Name + "-backup"},
			Spec:       databasev1alpha1.DatabaseBackupSpec{ClusterName: dc.Name, Method: databasev1alpha1.BackupOffline},
		}
		began := time.Now()
		Expect(k8s.Create(ctx, backup)).To(Succeed())
		waitBackupCompleted(ctx, backup)
		report("PostgreSQL: Offline backup -> Completed (the pod stopped, its directory copied)", time.Since(began))
		waitAvailable(ctx, dc, began)
		report("PostgreSQL: Offline backup -> Completed and the cluster Available again", time.Since(began))

		db := pgConnect(ctx, dc, username, password)
		rows := make([][]any, postgresLateRows)
		for i := range rows {
			rows[i] = []any{postgresRows + i, postgresValue(postgresRows + i)}
		}
		_, err := db.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"id", "value"}, pgx.CopyFromRows(rows))
		Expect(err).NotTo(HaveOccurred())
		var count int
		Expect(db.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&count)).To(Succeed())
		Expect(count).To(Equal(postgresRows+postgresLateRows), "the rows written after the backup are there before the disaster")
		Expect(db.Close(ctx)).To(Succeed())

		// The disaster: the cluster, its claim and volume, its Secrets.
		Expect(k8s.Delete(ctx, dc)).To(Succeed())
		waitClusterAndVolumesGone(ctx, dc)

		restored := sampleCluster(dc.Namespace, postgresSampleFile)
		restored.Spec.Config = dc.Spec.Config // with the configuration it had
		restored.Spec.PVCRetentionPolicy = dc.Spec.PVCRetentionPolicy
		restored.Spec.Credentials.SecretName = kept.Name
		restored.Spec.Bootstrap = &databasev1alpha1.BootstrapSpec{FromBackup: databasev1alpha1.BackupSource{Name: backup.Name}}
		began = time.Now()
		Expect(k8s.Create(ctx, restored)).To(Succeed())
		report("PostgreSQL: restore from the Offline backup -> Available", waitAvailable(ctx, restored, began))
		Expect(restored.Status.RestoredFromBackup).To(Equal(backup.Name))
		expectClaimsRestored(ctx, restored, backup)
		expectSidecarRunning(ctx, restored)

		// A new cluster, a new CA: the client reads ca.crt again from NAME-tls.
		db = pgConnect(ctx, restored, username, password)
		defer func() { _ = db.Close(ctx) }()
		expectRows(ctx, db, postgresRows)
		reportCount("PostgreSQL rows restored from the Offline backup (0 lost, none of the 100 written after it)", postgresRows)
		Expect(pgSetting(ctx, db, "work_mem")).To(Equal("16MB"))
		expectExporterUp(ctx, restored)

		Expect(k8s.Delete(ctx, backup)).To(Succeed())
		Expect(k8s.Delete(ctx, restored)).To(Succeed())
		waitClusterAndVolumesGone(ctx, restored)
	}, NodeTimeout(10*time.Minute))
}

func postgresValue(i int) string { return "row-" + strconv.Itoa(i) }

// postgresCredentials reads username and password of the named Secret.
func postgresCredentials(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, name string) (string, string) {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: name}, secret)).To(Succeed())
	return string(secret.Data[databasev1alpha1.UsernameKey]), string(secret.Data[databasev1alpha1.PasswordKey])
}

// pgConfig is a connection to the cluster's client Service (its ClusterIP) with extra
// connection-string settings; with roots, the server's certificate must chain to them and name
// the Service (NAME.NS.svc), as sslmode=verify-full with sslrootcert does.
func pgConfig(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, settings, user, password string, roots *x509.CertPool) *pgx.ConnConfig {
	GinkgoHelper()
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: dc.Namespace, Name: dc.ClientServiceName()}, svc)).To(Succeed())
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=postgres connect_timeout=5 %s",
		svc.Spec.ClusterIP, dc.DatabasePort(), user, password, settings))
	Expect(err).NotTo(HaveOccurred())
	if cfg.TLSConfig != nil {
		cfg.TLSConfig.RootCAs = roots
		cfg.TLSConfig.ServerName = dc.ClientServiceName() + "." + dc.Namespace + ".svc"
	}
	return cfg
}

// pgConnect connects over TLS (sslmode=verify-full against ca.crt of the cluster's NAME-tls),
// retrying while the server starts.
func pgConnect(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, user, password string) *pgx.Conn {
	GinkgoHelper()
	var conn *pgx.Conn
	Eventually(func(g Gomega) {
		cfg := pgConfig(ctx, dc, "sslmode=verify-full", user, password, caPool(servingSecret(ctx, dc)))
		var err error
		conn, err = pgx.ConnectConfig(ctx, cfg)
		g.Expect(err).NotTo(HaveOccurred())
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	return conn
}

// expectRefused checks that a connection with these settings fails, saying why.
func expectRefused(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, settings, user, password string, roots *x509.CertPool, why string) {
	GinkgoHelper()
	conn, err := pgx.ConnectConfig(ctx, pgConfig(ctx, dc, settings, user, password, roots))
	if err == nil {
		_ = conn.Close(ctx)
	}
	Expect(err).To(MatchError(ContainSubstring(why)), "a connection with %s", settings)
}

// pgSetting is the value of a run-time setting, as SHOW reports it.
func pgSetting(ctx context.Context, db *pgx.Conn, name string) string {
	GinkgoHelper()
	var value string
	Expect(db.QueryRow(ctx, "SHOW "+pgx.Identifier{name}.Sanitize()).Scan(&value)).To(Succeed())
	return value
}

// expectRows reads the table back: exactly want rows, each with its value.
func expectRows(ctx context.Context, db *pgx.Conn, want int) {
	GinkgoHelper()
	rows, err := db.Query(ctx, "SELECT id, value FROM items ORDER BY id")
	Expect(err).NotTo(HaveOccurred())
	got := 0
	wrong := 0
	for rows.Next() {
		var id int
		var value string
		Expect(rows.Scan(&id, &value)).To(Succeed())
		if id != got || value != postgresValue(id) {
			wrong++
		}
		got++
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	Expect(got).To(Equal(want), "rows")
	Expect(wrong).To(BeZero(), "rows lost or changed")
	GinkgoWriter.Printf("Read back %d/%d rows\n", got, want)
}

// expectRunsImage checks that the database and the sidecar of the cluster's pod run the image
// the kubelet pulled as digest (the sample names it by tag).
func expectRunsImage(ctx context.Context, dc *databasev1alpha1.DatabaseCluster, digest string) {
	GinkgoHelper()
	pod := podsOf(ctx, dc)[dc.StatefulSetName()+"-0"]
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	Expect(statuses).To(HaveLen(2))
	for _, st := range statuses {
		Expect(st.ImageID).To(Equal(digest), "container %s (image %s)", st.Name, st.Image)
		fmt.Fprintf(os.Stderr, "PULLED %s (pod %s/%s, container %s)\n", st.ImageID, pod.Namespace, pod.Name, st.Name)
	}
}

// expectSidecarRunning checks that the cluster's pod runs the sample's sidecar as a native
// sidecar (an init container with restartPolicy Always), started, beside the Ready database.
func expectSidecarRunning(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pod, ok := podsOf(ctx, dc)[dc.StatefulSetName()+"-0"]
		g.Expect(ok).To(BeTrue())
		g.Expect(pod.Spec.InitContainers).To(HaveLen(1))
		g.Expect(pod.Spec.InitContainers[0].RestartPolicy).To(HaveValue(Equal(corev1.ContainerRestartPolicyAlways)))
		g.Expect(pod.Status.InitContainerStatuses).To(HaveLen(1))
		status := pod.Status.InitContainerStatuses[0]
		g.Expect(status.Name).To(Equal("exporter"))
		g.Expect(status.State.Running).NotTo(BeNil(), "the exporter does not run: %+v", status.State)
		g.Expect(status.Started).To(HaveValue(BeTrue()))
		g.Expect(isReady(&pod)).To(BeTrue())
	}).WithContext(ctx).Should(Succeed())
}

// expectExporterUp scrapes the sidecar's metrics from the host: postgres_exporter reached the
// database (over TLS, with the pod's credentials) and reports pg_up 1.
func expectExporterUp(ctx context.Context, dc *databasev1alpha1.DatabaseCluster) {
	GinkgoHelper()
	ip := podIP(ctx, dc.Namespace, dc.StatefulSetName()+"-0")
	url := "http://" + net.JoinHostPort(ip, postgresExporterPort) + "/metrics"
	Eventually(func(g Gomega) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		g.Expect(string(body)).To(MatchRegexp(`(?m)^pg_up 1$`), "the exporter does not reach the database")
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}
