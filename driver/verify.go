package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// VerifyReport names the files VerifyPlanFile checked.
type VerifyReport struct {
	Plan  string // the plan.json read: the path given, or DIR/plan.json
	Model string // the model file, given or found by its sha256
}

// ModelNotNamedError reports that a plan records no model sha256, so the
// model cannot be found and must be given.
type ModelNotNamedError struct {
	Plan string // the plan.json read
}

func (e *ModelNotNamedError) Error() string {
	return fmt.Sprintf("verify: %s names no model sha256; give the model: heliac verify MODEL %s", e.Plan, e.Plan)
}

// VerifyPlanFile checks a plan.json file against its model, independently
// of the planner, as `heliac verify` does. planPath is plan.json or a
// directory holding it. modelPath is the model file; "" means find it by the
// sha256 the plan records, among the .tflite and .bin files in the plan's
// directory, its parent and the current directory.
//
// A given model must have the recorded sha256, when the plan records one. A
// plan without one and no model given is a *ModelNotNamedError. Violations
// are returned as a *VerifyError, wrapped with the plan's path, together
// with the report.
func VerifyPlanFile(planPath, modelPath string) (*VerifyReport, error) {
	path := planPath
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "plan.json")
	}
	js, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// A plan too broken to decode names no sha256; verify.Plan says what
	// is wrong with it.
	var head struct {
		Model struct {
			SHA256 string `json:"sha256"`
		} `json:"model"`
	}
	_ = json.Unmarshal(js, &head)
	sum := head.Model.SHA256
	if modelPath == "" {
		if sum == "" {
			return nil, &ModelNotNamedError{Plan: path}
		}
		if modelPath, err = findModel(path, sum); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(modelPath)
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
	if v := append(verify.Plan(m, js), verifyCBeside(path, js)...); len(v) > 0 {
		return r, fmt.Errorf("%s: %w", path, &VerifyError{Violations: v})
	}
	return r, nil
}

// findModel looks for the model file whose sha256 is sum, in the directory
// of planPath, its parent and the current directory: first the .tflite
// files, then the .bin files, of each directory in turn.
func findModel(planPath, sum string) (string, error) {
	dir := filepath.Dir(planPath)
	for _, d := range []string{dir, filepath.Dir(dir), "."} {
		for _, pat := range []string{"*.tflite", "*.bin"} {
			files, _ := filepath.Glob(filepath.Join(d, pat))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err == nil && sha256Hex(data) == sum {
					return f, nil
				}
			}
		}
	}
	return "", fmt.Errorf("verify: no model with sha256 %s next to %s; give it: heliac verify MODEL %s", sum, planPath, planPath)
}

// sha256Hex is the lower-case hex sha256 of data, as plan.json records it.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
