package deploy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The fields of a batch/v1 Job (and a v1 PersistentVolumeClaim) that the
// manifests use, and no others: decoding with DisallowUnknownFields fails
// on a misspelled or misplaced field, and on a value of the wrong type.

type objectMeta struct {
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

type job struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       jobSpec    `json:"spec"`
}

type jobSpec struct {
	CompletionMode       string      `json:"completionMode,omitempty"`
	Completions          *int32      `json:"completions,omitempty"`
	Parallelism          *int32      `json:"parallelism,omitempty"`
	BackoffLimit         *int32      `json:"backoffLimit,omitempty"`
	BackoffLimitPerIndex *int32      `json:"backoffLimitPerIndex,omitempty"`
	Template             podTemplate `json:"template"`
}

type podTemplate struct {
	Metadata objectMeta `json:"metadata"`
	Spec     podSpec    `json:"spec"`
}

type podSpec struct {
	RestartPolicy   string              `json:"restartPolicy"`
	SecurityContext *podSecurityContext `json:"securityContext,omitempty"`
	Containers      []container         `json:"containers"`
	Volumes         []volume            `json:"volumes,omitempty"`
}

type podSecurityContext struct {
	RunAsNonRoot *bool  `json:"runAsNonRoot,omitempty"`
	RunAsUser    *int64 `json:"runAsUser,omitempty"`
	RunAsGroup   *int64 `json:"runAsGroup,omitempty"`
	FSGroup      *int64 `json:"fsGroup,omitempty"`
}

type container struct {
	Name            string                    `json:"name"`
	Image           string                    `json:"image"`
	Args            []string                  `json:"args"`
	Env             []envVar                  `json:"env,omitempty"`
	VolumeMounts    []volumeMount             `json:"volumeMounts,omitempty"`
	SecurityContext *containerSecurityContext `json:"securityContext,omitempty"`
}

type envVar struct {
	Name      string `json:"name"`
	Value     string `json:"value,omitempty"`
	ValueFrom *struct {
		FieldRef *struct {
			FieldPath string `json:"fieldPath"`
		} `json:"fieldRef,omitempty"`
	} `json:"valueFrom,omitempty"`
}

type volumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
}

type containerSecurityContext struct {
	AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation,omitempty"`
	ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem,omitempty"`
	Capabilities             *struct {
		Drop []string `json:"drop,omitempty"`
	} `json:"capabilities,omitempty"`
}

type volume struct {
	Name                  string `json:"name"`
	PersistentVolumeClaim *struct {
		ClaimName string `json:"claimName"`
	} `json:"persistentVolumeClaim,omitempty"`
	EmptyDir *struct{} `json:"emptyDir,omitempty"`
}

type pvc struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		AccessModes      []string `json:"accessModes"`
		StorageClassName string   `json:"storageClassName"`
		Resources        struct {
			Requests map[string]string `json:"requests"`
		} `json:"resources"`
	} `json:"spec"`
}

// The values filled in, as submit.sh would.
const (
	shards  = 3
	startAt = "2026-12-02T00:00:30Z"
	target  = "http://limiter.default.svc:8080/"
	image   = "registry.example/ratebench:test"
	claim   = "ratebench-results"
	run     = "r1"
)

var extraArgs = []string{"-rate", "2000", "-duration", "1m"}

// fill replaces ${NAME} for the names in vars, as `envsubst '${A} ...'`
// does, and fails on any ${...} left.
func fill(t *testing.T, text string, vars map[string]string) string {
	t.Helper()
	out := regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
	if i := strings.Index(out, "${"); i >= 0 {
		t.Fatalf("placeholder left unfilled: %q", out[i:min(len(out), i+30)])
	}
	return out
}

func placeholders() map[string]string {
	var attack, dirs []string
	for _, a := range extraArgs {
		attack = append(attack, ", "+strconv.Quote(a))
	}
	for i := range shards {
		dirs = append(dirs, strconv.Quote(fmt.Sprintf("/results/%s/shard-%d", run, i)))
	}
	return map[string]string{
		"N": strconv.Itoa(shards), "T": startAt, "TARGET_URL": target, "IMAGE": image,
		"PVC": claim, "STORAGE_CLASS": "nfs", "PVC_SIZE": "10Gi", "RUN": run,
		"ATTACK_ARGS": strings.Join(attack, ""), "SHARD_DIRS": strings.Join(dirs, ", "),
	}
}

// decodeStrict decodes each YAML document of text into a new T, through
// JSON, refusing unknown fields.
func decodeStrict[T any](t *testing.T, text string) []T {
	t.Helper()
	var docs []T
	d := yaml.NewDecoder(strings.NewReader(text))
	for {
		var v any
		err := d.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("yaml: %v", err)
		}
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("to JSON: %v", err)
		}
		jd := json.NewDecoder(bytes.NewReader(b))
		jd.DisallowUnknownFields()
		var doc T
		if err := jd.Decode(&doc); err != nil {
			t.Fatalf("strict decode: %v\n%s", err, b)
		}
		docs = append(docs, doc)
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func one[T any](t *testing.T, text string) T {
	t.Helper()
	docs := decodeStrict[T](t, text)
	if len(docs) != 1 {
		t.Fatalf("got %d documents, want 1", len(docs))
	}
	return docs[0]
}

func TestManifests(t *testing.T) {
	vars := placeholders()
	checkPVC(t, one[pvc](t, fill(t, read(t, "pvc.yaml"), vars)))
	attack := one[job](t, fill(t, read(t, "attack-job.yaml"), vars))
	merge := one[job](t, fill(t, read(t, "merge-job.yaml"), vars))
	checkAttack(t, attack)
	checkMerge(t, merge, attack)
}

// TestSubmitDryRun fills the manifests with submit.sh itself.
func TestSubmitDryRun(t *testing.T) {
	for _, tool := range []string{"bash", "envsubst"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	cmd := exec.Command("bash", append([]string{"submit.sh", "-dry-run", "--"}, extraArgs...)...)
	cmd.Env = append(os.Environ(), "N="+strconv.Itoa(shards), "T="+startAt, "TARGET_URL="+target,
		"IMAGE="+image, "PVC="+claim, "STORAGE_CLASS=nfs", "RUN="+run)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("submit.sh -dry-run: %v", err)
	}
	docs := strings.Split(string(out), "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("got %d documents, want pvc, attack, merge", len(docs))
	}
	checkPVC(t, one[pvc](t, docs[0]))
	attack := one[job](t, docs[1])
	checkAttack(t, attack)
	checkMerge(t, one[job](t, docs[2]), attack)
}

func TestScriptsParse(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, s := range []string{"submit.sh", "local.sh"} {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", s, err, out)
		}
	}
}

func checkPVC(t *testing.T, p pvc) {
	t.Helper()
	if p.APIVersion != "v1" || p.Kind != "PersistentVolumeClaim" || p.Metadata.Name != claim {
		t.Errorf("pvc: %s %s %s", p.APIVersion, p.Kind, p.Metadata.Name)
	}
	if !slices.Equal(p.Spec.AccessModes, []string{"ReadWriteMany"}) {
		t.Errorf("pvc accessModes %v, want [ReadWriteMany]", p.Spec.AccessModes)
	}
	if p.Spec.Resources.Requests["storage"] == "" {
		t.Error("pvc: no storage request")
	}
}

// checkPod checks what both Jobs share: one non-root container, never
// restarted, no retries, the results claim mounted at /results.
func checkPod(t *testing.T, j job) container {
	t.Helper()
	if j.APIVersion != "batch/v1" || j.Kind != "Job" {
		t.Errorf("%s: %s %s, want batch/v1 Job", j.Metadata.Name, j.APIVersion, j.Kind)
	}
	noRetry := (j.Spec.BackoffLimit != nil && *j.Spec.BackoffLimit == 0) ||
		(j.Spec.BackoffLimitPerIndex != nil && *j.Spec.BackoffLimitPerIndex == 0)
	if !noRetry {
		t.Errorf("%s: retries allowed; want backoffLimit or backoffLimitPerIndex 0", j.Metadata.Name)
	}
	p := j.Spec.Template.Spec
	if p.RestartPolicy != "Never" {
		t.Errorf("%s: restartPolicy %q, want Never", j.Metadata.Name, p.RestartPolicy)
	}
	if sc := p.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot ||
		sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("%s: want runAsNonRoot true and a non-zero runAsUser", j.Metadata.Name)
	}
	if len(p.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", j.Metadata.Name, len(p.Containers))
	}
	c := p.Containers[0]
	if c.Image != image {
		t.Errorf("%s: image %q", j.Metadata.Name, c.Image)
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: want allowPrivilegeEscalation false", j.Metadata.Name)
	}
	var claimVol string
	for _, v := range p.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			claimVol = v.Name
		}
	}
	if claimVol == "" {
		t.Fatalf("%s: no volume from claim %s", j.Metadata.Name, claim)
	}
	if !slices.Contains(c.VolumeMounts, volumeMount{Name: claimVol, MountPath: "/results"}) {
		t.Errorf("%s: claim not mounted at /results: %v", j.Metadata.Name, c.VolumeMounts)
	}
	for _, m := range c.VolumeMounts {
		if !slices.ContainsFunc(p.Volumes, func(v volume) bool { return v.Name == m.Name }) {
			t.Errorf("%s: mount of unknown volume %s", j.Metadata.Name, m.Name)
		}
	}
	return c
}

// flagValue is the argument after flag name in args.
func flagValue(t *testing.T, args []string, name string) string {
	t.Helper()
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("args %q: no %s VALUE", args, name)
	}
	return args[i+1]
}

func checkAttack(t *testing.T, j job) {
	t.Helper()
	s := j.Spec
	if s.CompletionMode != "Indexed" {
		t.Errorf("completionMode %q, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || *s.Completions != shards || s.Parallelism == nil || *s.Parallelism != shards {
		t.Errorf("want completions and parallelism %d", shards)
	}
	c := checkPod(t, j)
	if len(c.Args) == 0 || c.Args[0] != "attack" {
		t.Fatalf("args %q: want attack first", c.Args)
	}
	if got, want := flagValue(t, c.Args, "-shard"), fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", shards); got != want {
		t.Errorf("-shard %q, want %q", got, want)
	}
	if got := flagValue(t, c.Args, "-start-at"); got != startAt {
		t.Errorf("-start-at %q, want %q", got, startAt)
	}
	if got := flagValue(t, c.Args, "-url"); got != target {
		t.Errorf("-url %q, want %q", got, target)
	}
	if got, want := flagValue(t, c.Args, "-out"), "/results/"+run+"/shard-$(JOB_COMPLETION_INDEX)"; got != want {
		t.Errorf("-out %q, want %q", got, want)
	}
	if !slices.Equal(c.Args[len(c.Args)-len(extraArgs):], extraArgs) {
		t.Errorf("args %q do not end with the extra flags %q", c.Args, extraArgs)
	}
	// Kubernetes expands $(NAME) only for the container's env; the index
	// must come from the completion-index annotation (as the controller's
	// own JOB_COMPLETION_INDEX does).
	for _, m := range regexp.MustCompile(`\$\((\w+)\)`).FindAllStringSubmatch(strings.Join(c.Args, " "), -1) {
		if !slices.ContainsFunc(c.Env, func(e envVar) bool { return e.Name == m[1] }) {
			t.Errorf("args use $(%s), not in env", m[1])
		}
	}
	for _, e := range c.Env {
		if e.Name == "JOB_COMPLETION_INDEX" && (e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
			e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']") {
			t.Errorf("JOB_COMPLETION_INDEX not from the completion-index annotation")
		}
	}
}

func checkMerge(t *testing.T, j job, attack job) {
	t.Helper()
	if j.Spec.CompletionMode == "Indexed" || (j.Spec.Completions != nil && *j.Spec.Completions != 1) {
		t.Error("merge: want a single pod")
	}
	if j.Metadata.Name == attack.Metadata.Name {
		t.Error("merge and attack Jobs share a name")
	}
	c := checkPod(t, j)
	want := []string{"merge"}
	out := flagValue(t, attack.Spec.Template.Spec.Containers[0].Args, "-out")
	for i := range shards {
		want = append(want, strings.ReplaceAll(out, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(i)))
	}
	want = append(want, "-out", "/results/"+run+"/merged")
	if !slices.Equal(c.Args, want) {
		t.Errorf("merge args %q, want %q", c.Args, want)
	}
}
