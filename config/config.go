// Package config reads heliac's config and platform files, YAML or JSON,
// into the options plan.Build takes.
//
// Input: the bytes (or the path) of a config file, which gives a platform and
// placement rules, or of a platform file, which gives a platform alone.
// Output: a File or a plan.Platform, new values; File.Options turns them into
// the Platform and Rules of plan.Options.
//
// Decoding is strict: an unknown key, a key given twice, a merge key or a
// value of the wrong type is an error that names the key's path and line,
// and for an unknown key the keys that are known. Aliases may add at most
// maxAliasValues values to those a file writes out (checkAliases), so that
// no alias bomb reaches the decoding. Such errors start
// "config: line N:". What the values mean (bank names, capacities, where a
// rule may place what) is checked by plan, with Platform.Validate and
// ValidateRules; their errors are returned as plan made them ("plan: ...").
//
// A bank's keys are the yaml tags of plan.Bank; this package declares no
// bank field of its own.
//
// Of heliac's packages it imports plan, kernels (for the type of its
// scratch overrides), and internal/inputfile to read files with a size
// limit, only: it must not import liveness, emit, verify or driver, and
// neither plan nor kernels may import it.
package config

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
)

// File is a config file: a platform and the rules that place tensors in its
// banks. Parse reads it from YAML or JSON:
//
//	platform: apollo510      # a built-in name, or a mapping as ParsePlatform reads
//	rules:
//	  - class: scratch       # scratch, persistent or constant
//	    memory: DTCM
//	  - tensor: "0:12"       # subgraph:tensor
//	    memory: SRAM
//	  - name: "model/conv*"  # path.Match glob on the tensor name
//	    memory: SRAM
//	  - class: constant      # staged: copied from MRAM into DTCM at init
//	    memory: DTCM
//	    source: MRAM
//	external_arenas:         # arenas the application binds (names or globs)
//	  - scratch_sram
//	kernel_scratch:          # what kernels ask for, beyond the library's rules
//	  - custom: MyOp         # (kernels.ScratchOverride)
//	    buffers:
//	      - bytes: 1024
type File struct {
	// Platform is the zero Platform, with no banks, when the file names
	// none: the caller picks one (Options leaves it to plan's default) and
	// plan checks Rules against it.
	Platform plan.Platform
	Rules    []plan.Rule // in file order
	// External names the arenas the application binds (plan.Options.External).
	External []string
	// KernelScratch overrides the kernel library's scratch rules
	// (kernels.Library.WithScratch).
	KernelScratch []kernels.ScratchOverride
}

// fileDoc is the shape of a config file. The platform is a node because it
// is either a built-in name or a mapping.
type fileDoc struct {
	Platform      yaml.Node                 `yaml:"platform"`
	Rules         []plan.Rule               `yaml:"rules"`
	External      []string                  `yaml:"external_arenas"`
	KernelScratch []kernels.ScratchOverride `yaml:"kernel_scratch"`
}

// Parse reads a File from YAML or JSON. A platform the file gives is
// validated, and the rules are checked against it; without one, only what
// needs no platform is checked (plan.ValidateRuleForms).
func Parse(data []byte) (File, error) {
	root, err := document(data)
	if err != nil || root == nil {
		return File{}, err
	}
	if root.Kind != yaml.MappingNode {
		return File{}, errorf(root.Line, "want a mapping with platform and rules, got %s", describe(root))
	}
	var doc fileDoc
	if err := decodeStrict(root, "", &doc); err != nil {
		return File{}, err
	}
	f := File{Rules: doc.Rules, External: doc.External, KernelScratch: doc.KernelScratch}
	if err := scratchLines(root, f.KernelScratch); err != nil {
		return File{}, err
	}
	if pn := resolve(&doc.Platform); pn.Kind == 0 || isNull(pn) {
		if err := plan.ValidateRuleForms(f.Rules); err != nil {
			return File{}, err
		}
		return f, nil
	}
	if f.Platform, err = platformFromNode(&doc.Platform, "platform"); err != nil {
		return File{}, err
	}
	if err := f.Platform.Validate(); err != nil {
		return File{}, err
	}
	if err := plan.ValidateRules(f.Rules, f.Platform); err != nil {
		return File{}, err
	}
	return f, nil
}

// scratchLines records the line of each kernel_scratch entry of the
// config's root mapping in its entry, for messages, and checks the
// entries on their own (kernels.CheckScratchOverrides): a mistake there
// is an error at once, naming the entry and its line.
func scratchLines(root *yaml.Node, entries []kernels.ScratchOverride) error {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "kernel_scratch" {
			continue
		}
		if list := resolve(root.Content[i+1]); list.Kind == yaml.SequenceNode && len(list.Content) == len(entries) {
			for k, n := range list.Content {
				entries[k].Line = resolve(n).Line
			}
		}
	}
	return kernels.CheckScratchOverrides(entries)
}

// ParsePlatform reads a platform from YAML or JSON: a built-in name, or a
// mapping
//
//	base: apollo510         # optional built-in to start from
//	name: my-board
//	constant_bank: MRAM     # "" means the first read-only bank
//	banks:
//	  - name: DTCM          # an existing bank (same name, with case):
//	    capacity: 262144    #   the keys given replace its fields
//	  - name: PSRAM         # a new bank is appended; keys not given are 0
//	    capacity: 8388608
//	    writable: true
//	    order: 5
//
// whose banks have the keys of plan.Bank's yaml tags (name, capacity,
// writable, boot_init, alignment, order). The result is validated.
func ParsePlatform(data []byte) (plan.Platform, error) {
	root, err := document(data)
	if err != nil {
		return plan.Platform{}, err
	}
	if root == nil {
		return plan.Platform{}, errors.New("config: the platform file is empty")
	}
	p, err := platformFromNode(root, "platform")
	if err != nil {
		return plan.Platform{}, err
	}
	if err := p.Validate(); err != nil {
		return plan.Platform{}, err
	}
	return p, nil
}

// Read reads the config file at path with Parse. A parse error is prefixed
// with path.
func Read(path string) (File, error) {
	data, err := inputfile.Read(path, inputfile.Config)
	if err != nil {
		return File{}, err
	}
	f, err := Parse(data)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// ReadPlatform reads the platform file at path with ParsePlatform. A parse
// error is prefixed with path.
func ReadPlatform(path string) (plan.Platform, error) {
	data, err := inputfile.Read(path, inputfile.Platform)
	if err != nil {
		return plan.Platform{}, err
	}
	p, err := ParsePlatform(data)
	if err != nil {
		return plan.Platform{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Options returns the plan options f gives: its Rules and External, and a
// Platform. chosen is a platform picked outside the file, as heliac's
// --platform and --platform-file flags pick one; when it is not nil it
// beats f's platform. Otherwise the platform is f's, or nil (plan's
// default) when f names none. The other fields of the result are zero,
// which means plan's defaults.
func (f File) Options(chosen *plan.Platform) plan.Options {
	o := plan.Options{Rules: f.Rules, External: f.External, Platform: chosen}
	if chosen == nil && len(f.Platform.Banks) > 0 {
		p := f.Platform
		o.Platform = &p
	}
	return o
}
