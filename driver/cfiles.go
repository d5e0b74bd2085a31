package driver

import (
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/verify"
)

// verifySetC checks the C module of a plan's set (FindSet) against the plan
// (verify.C). A plan without its C files (shipped alone, or named plan.json
// as before sets) is not an error; a C file that cannot be read is.
func verifySetC(s Set, planJSON []byte) ([]verify.Violation, error) {
	if s.Header == "" || s.Source == "" {
		return nil, nil
	}
	h, err := inputfile.Read(s.Header, inputfile.CSource)
	if err != nil {
		return nil, err
	}
	c, err := inputfile.Read(s.Source, inputfile.CSource)
	if err != nil {
		return nil, err
	}
	return verify.C(planJSON, h, c), nil
}
