// deploy_test.go validates the deployment files: every manifest of the
// kustomize base against the Kubernetes schemas with kubeconform (strict:
// an unknown field is an error), the rules a replicated gateway relies on,
// and the Dockerfile's promise of a static binary run as a non-root user.

package deploy_test

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yannh/kubeconform/pkg/resource"
	"github.com/yannh/kubeconform/pkg/validator"
	"go.yaml.in/yaml/v3"

	"github.com/mcpgate/mcpgate/internal/config"
)

const base = "kubernetes/base"

type kustomization struct {
	APIVersion string           `yaml:"apiVersion"`
	Kind       string           `yaml:"kind"`
	Namespace  string           `yaml:"namespace"`
	Labels     []map[string]any `yaml:"labels"`
	Resources  []string         `yaml:"resources"`
	Images     []map[string]any `yaml:"images"`
}

// readKustomization decodes the base's kustomization.yaml, refusing keys
// it does not know (a typo would make kustomize ignore a whole section).
func readKustomization(t *testing.T) kustomization {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(base, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml is %s %s", k.APIVersion, k.Kind)
	}
	return k
}

// object is a manifest decoded loosely, for the rules below.
type object map[string]any

func (o object) get(path ...string) any {
	var v any = map[string]any(o)
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func manifests(t *testing.T) map[string]object {
	t.Helper()
	out := map[string]object{}
	for _, file := range readKustomization(t).Resources {
		raw, err := os.ReadFile(filepath.Join(base, file))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any // not object: yaml would make every nested map one
		if err := yaml.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		o := object(m)
		kind, name := o.get("kind").(string), o.get("metadata", "name").(string)
		out[kind+"/"+name] = o
		if name == "mcpgate" {
			out[kind] = o // the gateway's own
		}
	}
	return out
}

// validate runs kubeconform over one manifest and returns the problem, or
// nil.
func validate(t *testing.T, v validator.Validator, name string, manifest []byte) error {
	t.Helper()
	results := v.Validate(name, io.NopCloser(bytes.NewReader(manifest)))
	if len(results) == 0 {
		return fmt.Errorf("%s: no resource found", name)
	}
	for _, r := range results {
		if r.Status != validator.Valid {
			return fmt.Errorf("%s: %v (status %d)", name, r.Err, r.Status)
		}
	}
	return nil
}

func newValidator(t *testing.T, kinds ...string) validator.Validator {
	t.Helper()
	dir := t.TempDir()
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	writeSchemas(t, swaggerPath(t), dir, want)
	if len(want) != 0 {
		t.Fatalf("kinds not in Kubernetes %s: %v", kubernetesRelease, want)
	}
	v, err := validator.New([]string{filepath.Join(dir, "{{ .ResourceKind }}{{ .KindSuffix }}.json")},
		validator.Opts{Strict: true, KubernetesVersion: strings.TrimPrefix(kubernetesRelease, "v")})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var kindsOfTheBase = []string{"configmap-v1", "deployment-apps-v1", "service-v1", "poddisruptionbudget-policy-v1", "networkpolicy-networking-v1"}

func TestManifestsAreValidAgainstTheKubernetesSchemas(t *testing.T) {
	k := readKustomization(t)
	// Every manifest in the folder is in the base, and every one the
	// base names is there.
	files, _ := filepath.Glob(filepath.Join(base, "*.yaml"))
	var inFolder []string
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			inFolder = append(inFolder, filepath.Base(f))
		}
	}
	listed := slices.Clone(k.Resources)
	slices.Sort(listed)
	if !slices.Equal(listed, inFolder) {
		t.Fatalf("kustomization resources %v, folder %v", listed, inFolder)
	}
	v := newValidator(t, kindsOfTheBase...)
	for _, file := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(base, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, v, file, raw); err != nil {
			t.Error(err)
		}
	}
	// The validator refuses what is wrong: an unknown field, a wrong type.
	deployment, _ := os.ReadFile(filepath.Join(base, "deployment.yaml"))
	for _, bad := range []struct{ rule, from, to string }{
		{"an unknown field", "  replicas: 3\n", "  replica: 3\n"},
		{"a wrong type", "  replicas: 3\n", "  replicas: three\n"},
		{"a misplaced probe field", "            periodSeconds: 5\n", "            period: 5\n"},
	} {
		if !bytes.Contains(deployment, []byte(bad.from)) {
			t.Fatalf("deployment.yaml has no %q", bad.from)
		}
		broken := bytes.Replace(deployment, []byte(bad.from), []byte(bad.to), 1)
		if err := validate(t, v, "deployment.yaml", broken); err == nil {
			t.Errorf("%s passed validation", bad.rule)
		}
	}
	_ = resource.Resource{} // the validator's unit, named for readers
}

func TestReplicatedDeploymentRules(t *testing.T) {
	m := manifests(t)
	dep, svc, pdb, np, cm := m["Deployment"], m["Service"], m["PodDisruptionBudget"], m["NetworkPolicy"], m["ConfigMap"]
	for kind, o := range map[string]object{"Deployment": dep, "Service": svc, "PodDisruptionBudget": pdb, "NetworkPolicy": np, "ConfigMap": cm} {
		if o == nil {
			t.Fatalf("no %s in the base", kind)
		}
	}
	podLabels := dep.get("spec", "template", "metadata", "labels").(map[string]any)
	matches := func(what string, selector any) {
		t.Helper()
		sel, _ := selector.(map[string]any)
		if len(sel) == 0 {
			t.Errorf("%s selects nothing", what)
		}
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("%s selects %s=%v, which the gateway's pods do not have", what, k, v)
			}
		}
	}
	matches("the Deployment", dep.get("spec", "selector", "matchLabels"))
	matches("the Service", svc.get("spec", "selector"))
	matches("the PodDisruptionBudget", pdb.get("spec", "selector", "matchLabels"))
	matches("the NetworkPolicy", np.get("spec", "podSelector", "matchLabels"))
	if r, _ := dep.get("spec", "replicas").(int); r < 2 {
		t.Errorf("%d replicas", r)
	}
	if svc.get("spec", "sessionAffinity") != "None" {
		t.Error("the Service is sticky: sealed sessions make that needless, and it hides a session that cannot move")
	}

	containers := dep.get("spec", "template", "spec", "containers").([]any)
	c := object(containers[0].(map[string]any))
	if c.get("readinessProbe", "httpGet", "path") != "/readyz" || c.get("livenessProbe", "httpGet", "path") != "/healthz" {
		t.Error("the probes are not /readyz (readiness) and /healthz (liveness)")
	}
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		headers, _ := c.get(probe, "httpGet", "httpHeaders").([]any)
		if len(headers) != 1 || object(headers[0].(map[string]any)).get("value") != "localhost" {
			t.Errorf("%s does not send a loopback Host (DNS-rebinding protection refuses the pod IP)", probe)
		}
	}
	if dep.get("spec", "template", "spec", "securityContext", "runAsNonRoot") != true ||
		c.get("securityContext", "allowPrivilegeEscalation") != false || c.get("securityContext", "readOnlyRootFilesystem") != true {
		t.Error("the pod is not non-root with a read-only root and no privilege escalation")
	}
	// Secrets by reference only.
	want := map[string]string{"PGPASSWORD": "postgres-password", "MCPGATE_SESSION_KEY": "session-key", "MCPGATE_REDIS_PASSWORD": "redis-password"}
	for _, e := range c.get("env").([]any) {
		env := object(e.(map[string]any))
		name := env.get("name").(string)
		if env.get("value") != nil {
			t.Errorf("env %s has a literal value", name)
		}
		if key, ok := want[name]; ok {
			if env.get("valueFrom", "secretKeyRef", "name") != "mcpgate-secrets" || env.get("valueFrom", "secretKeyRef", "key") != key {
				t.Errorf("env %s does not come from mcpgate-secrets/%s", name, key)
			}
			delete(want, name)
		}
	}
	if len(want) != 0 {
		t.Errorf("env missing: %v", want)
	}

	// The tool pods' wire admits the gateway's pods alone, on the port the
	// gateway's egress names: no other pod reaches a proxy.
	tools := m["NetworkPolicy/mcpgate-tools"]
	if tools == nil {
		t.Fatal("no NetworkPolicy mcpgate-tools for the tool pods' wire")
	}
	if tools.get("spec", "podSelector", "matchLabels", "app.kubernetes.io/part-of") != "mcpgate-tools" {
		t.Error("the tools' NetworkPolicy does not select the tool pods")
	}
	from, _ := tools.get("spec", "ingress").([]any)
	if len(from) != 1 {
		t.Fatalf("the tools' NetworkPolicy has %d ingress rules, want the gateway's alone", len(from))
	}
	rule := object(from[0].(map[string]any))
	peers, _ := rule.get("from").([]any)
	if len(peers) != 1 {
		t.Fatalf("the tools' wire admits %d kinds of peer, want the gateway's pods alone", len(peers))
	}
	matches("the tools' NetworkPolicy's peer", object(peers[0].(map[string]any)).get("podSelector", "matchLabels"))
	ports, _ := rule.get("ports").([]any)
	if len(ports) != 1 || object(ports[0].(map[string]any)).get("port") != 8080 {
		t.Errorf("the tools' wire admits ports %v, want 8080 (the gateway's egress to them)", ports)
	}

	// The configuration in the ConfigMap is one mcpgate accepts.
	file := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(file, []byte(cm.get("data", "mcpgate.yaml").(string)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.SessionKeyEnv, strings.Repeat("ab", 32))
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if !config.StoreIsPostgres(cfg.Store) || cfg.Redis.URL == "" {
		t.Errorf("the ConfigMap's store %q and redis %q: replicas need both shared", cfg.Store, cfg.Redis.URL)
	}
}

func TestDockerfileBuildsAStaticBinaryRunAsNonRoot(t *testing.T) {
	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	stages := regexp.MustCompile(`(?m)^FROM `).Split(df, -1)
	final := stages[len(stages)-1]
	user := regexp.MustCompile(`(?m)^USER (\d+)(?::(\d+))?\s*$`).FindStringSubmatch(final)
	if user == nil || user[1] == "0" {
		t.Errorf("the final stage's USER is %q: want a numeric non-root user", user)
	}
	build := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .*)$`).FindStringSubmatch(df)
	if build == nil {
		t.Fatal("no `RUN CGO_ENABLED=0 go build` in the Dockerfile")
	}
	if testing.Short() {
		t.Skip("builds the binary as the Dockerfile does")
	}
	// Build as the Dockerfile does, and look at the ELF: no interpreter,
	// no shared library — it runs on a base with no libc.
	out := filepath.Join(t.TempDir(), "mcpgate")
	args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/mcpgate"}
	if !strings.Contains(build[1], `-trimpath -ldflags "-s -w"`) {
		t.Fatalf("the Dockerfile builds with %q; this test builds with %v", build[1], args)
	}
	cmd := exec.CommandContext(context.Background(), "go", args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%v)", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) != 0 {
		t.Errorf("the binary needs %v", libs)
	}
}
