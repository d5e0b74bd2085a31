package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// VerifyReport names the files VerifyPlanFile checked.
type VerifyReport struct {
	Plan  string // the plan file read: the path given, or the one in DIR
	Model string // the model file, given or found by its sha256
	// Emitted is the model --emit-tflite wrote beside the plan
	// (<prefix>.tflite), when there is one, and EmittedInfo what it
	// records about the plan it was written with (graph.PlanInfoName:
	// kernels, code path, TFLM target; "" when it records nothing).
	Emitted, EmittedInfo string
}

// ModelNotNamedError reports that a plan records no model sha256, so the
// model cannot be found and must be given.
type ModelNotNamedError struct {
	Plan string // the plan file read
}

func (e *ModelNotNamedError) Error() string {
	return fmt.Sprintf("verify: %s names no model sha256; give the model: heliac verify MODEL %s", e.Plan, e.Plan)
}

// VerifyPlanFile checks a plan file against its model, independently of
// the planner, as `heliac verify` does. planPath is a plan file or a
// directory holding one (PlanFiles). modelPath is the model file; "" means
// find it by the sha256 the plan records (see findModel).
//
// A given model must have the recorded sha256, when the plan records one. A
// plan without one and no model given is a *ModelNotNamedError. The C files
// of the plan's set (FindSet) must carry the plan's hash. Violations are
// returned as a *VerifyError, wrapped with the plan's path, together with
// the report.
func VerifyPlanFile(planPath, modelPath string) (*VerifyReport, error) {
	path, err := onePlan(planPath)
	if err != nil {
		return nil, err
	}
	js, err := inputfile.Read(path, inputfile.Plan)
	if err != nil {
		return nil, err
	}
	head := readHead(js)
	if head.PlanHash != "" {
		if err := checkSet(FindSet(path), head.PlanHash); err != nil {
			return nil, err
		}
	}
	sum := head.Model.SHA256
	if modelPath == "" {
		if sum == "" {
			return nil, &ModelNotNamedError{Plan: path}
		}
		if modelPath, err = findModel(path, head.Model.Name, sum); err != nil {
			return nil, err
		}
	}
	data, err := inputfile.Read(modelPath, inputfile.Model)
	if err != nil {
		return nil, err
	}
	if got := sha256Hex(data); sum != "" && got != sum {
		return nil, fmt.Errorf("verify: %s was made for a model with sha256 %s, but %s has %s", path, sum, modelPath, got)
	}
	m, err := tflite.Load(data)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", modelPath, err)
	}
	r := &VerifyReport{Plan: path, Model: modelPath}
	cv, err := verifySetC(FindSet(path), m, js)
	if err != nil {
		return nil, err
	}
	v := append(verify.Plan(m, js), cv...)
	emitted, err := readEmitted(path)
	if err != nil {
		return nil, err
	}
	if emitted != nil {
		r.Emitted = emittedPath(path)
		info, iv := verify.PlanInfo(emitted, js)
		r.EmittedInfo = info
		for i := range iv {
			iv[i].Msg = filepath.Base(r.Emitted) + ": " + iv[i].Msg
		}
		v = append(v, iv...)
	}
	if len(v) == 0 && len(head.Stripes) > 0 && emitted != nil {
		v = verify.RewriteFile(m, emitted, js)
		for i := range v {
			v[i].Msg = filepath.Base(r.Emitted) + ": " + v[i].Msg
		}
	}
	if len(v) > 0 {
		return r, fmt.Errorf("%s: %w", path, &VerifyError{Violations: v})
	}
	return r, nil
}

// emittedPath is where --emit-tflite writes the model beside a plan file
// (<prefix>.tflite for <prefix>.plan.json), or "".
func emittedPath(planPath string) string {
	prefix, ok := strings.CutSuffix(planPath, PlanSuffix)
	if !ok {
		return ""
	}
	return prefix + ".tflite"
}

// readEmitted loads the model --emit-tflite wrote beside a plan file, or
// returns nil when there is none. Such a model is checked against the
// plan: what it records about the plan (verify.PlanInfo), and, for a plan
// that records stripes, the rewrite against the verifier's rebuild from
// the original (verify.RewriteFile).
func readEmitted(planPath string) (*graph.Model, error) {
	emitted := emittedPath(planPath)
	if emitted == "" {
		return nil, nil
	}
	if st, err := os.Stat(emitted); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	data, err := inputfile.Read(emitted, inputfile.Model)
	if err != nil {
		return nil, err
	}
	m, err := tflite.Load(data)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", emitted, err)
	}
	return m, nil
}

// onePlan returns the plan file planPath names: itself, or the one plan
// file of a directory.
func onePlan(planPath string) (string, error) {
	plans, err := PlanFiles(planPath)
	if err != nil {
		return "", err
	}
	if len(plans) > 1 {
		names := make([]string, len(plans))
		for i, p := range plans {
			names[i] = filepath.Base(p)
		}
		return "", fmt.Errorf("verify: %s holds %d plan files (%s); name one", planPath, len(plans), strings.Join(names, ", "))
	}
	return plans[0], nil
}

// planHead is what VerifyPlanFile reads of a plan before the verifier.
type planHead struct {
	Model struct {
		Name   string `json:"name"`
		SHA256 string `json:"sha256"`
	} `json:"model"`
	PlanHash string `json:"plan_hash"`
	// Stripes is the record of a stripe rewrite, when the plan has one.
	Stripes json.RawMessage `json:"stripes"`
}

// readHead decodes what it can of js's head. A plan too broken to decode
// names nothing; verify.Plan says what is wrong with it.
func readHead(js []byte) planHead {
	var h planHead
	_ = json.Unmarshal(js, &h)
	return h
}

// maxCandidates bounds how many files findModel hashes.
const maxCandidates = 64

// findModel looks for the model file whose sha256 is sum, in the directory
// of planPath, its parent and the current directory: first the files named
// for the model (name.tflite, name.bin) in each directory, then the other
// .tflite and .bin files of each directory in turn. It hashes regular files
// no larger than a model can be and at most maxCandidates of them, so a
// FIFO or a device named *.tflite never blocks it.
func findModel(planPath, name, sum string) (string, error) {
	dir := filepath.Dir(planPath)
	dirs := []string{dir, filepath.Dir(dir), "."}
	var candidates []string
	if name != "" && name == filepath.Base(name) {
		for _, d := range dirs {
			candidates = append(candidates, filepath.Join(d, name+".tflite"), filepath.Join(d, name+".bin"))
		}
	}
	for _, d := range dirs {
		for _, pat := range []string{"*.tflite", "*.bin"} {
			files, _ := filepath.Glob(filepath.Join(d, pat))
			candidates = append(candidates, files...)
		}
	}
	hashed := map[string]bool{}
	for _, f := range candidates {
		abs, err := filepath.Abs(f)
		if err != nil || hashed[abs] {
			continue
		}
		if len(hashed) == maxCandidates {
			return "", fmt.Errorf("verify: no model with sha256 %s among the first %d model files next to %s; give it: heliac verify MODEL %s",
				sum, maxCandidates, planPath, planPath)
		}
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() || st.Size() > inputfile.Model.Max {
			continue
		}
		hashed[abs] = true
		if data, err := inputfile.Read(f, inputfile.Model); err == nil && sha256Hex(data) == sum {
			return f, nil
		}
	}
	return "", fmt.Errorf("verify: no model with sha256 %s next to %s; give it: heliac verify MODEL %s", sum, planPath, planPath)
}

// sha256Hex is the lower-case hex sha256 of data, as plan.json records it.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// VerifyShared checks the shared module of a set in dir
// (heliac_shared.h and .c, emit.SharedC) against the plan files in dir,
// independently of the emitter (verify.Shared): each buffer's size,
// alignment and section, and that it is bound to exactly the arenas of its
// name the plans share. It returns the path of the module's source, or ""
// when dir holds no module and no plan shares an arena; violations come
// as a *VerifyError wrapped with that path.
func VerifyShared(dir string) (string, error) {
	plans, err := PlanFiles(dir)
	if err != nil {
		return "", err
	}
	var set []verify.SetPlan
	for _, p := range plans {
		prefix, ok := strings.CutSuffix(filepath.Base(p), PlanSuffix)
		if !ok {
			continue // the legacy plan.json: a model alone
		}
		js, err := inputfile.Read(p, inputfile.Plan)
		if err != nil {
			return "", err
		}
		set = append(set, verify.SetPlan{Prefix: prefix, JSON: js})
	}
	var mod [2][]byte
	paths := [2]string{filepath.Join(dir, emit.SharedName+".h"), filepath.Join(dir, emit.SharedName+".c")}
	for i, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if mod[i], err = inputfile.Read(p, inputfile.CSource); err != nil {
			return "", err
		}
	}
	v := verify.Shared(set, mod[0], mod[1])
	if len(v) == 0 && mod[0] == nil && mod[1] == nil {
		return "", nil
	}
	if len(v) > 0 {
		return paths[1], fmt.Errorf("%s: %w", paths[1], &VerifyError{Violations: v})
	}
	return paths[1], nil
}
