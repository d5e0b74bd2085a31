package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/heliac/heliac/plan"
)

// platformDoc is the shape of a platform mapping. The pointers tell a key
// that is absent from one given as "". Banks declares, through plan.Bank's
// yaml tags, the keys of a bank for checkShape; build reads each bank from
// its own node instead, so that it changes only the fields given.
type platformDoc struct {
	Base         *string     `yaml:"base"`
	Name         *string     `yaml:"name"`
	ConstantBank *string     `yaml:"constant_bank"`
	Banks        []plan.Bank `yaml:"banks"`
}

// platformFromNode builds a platform from a built-in name or a mapping; at
// is the key path of n for messages.
func platformFromNode(n *yaml.Node, at string) (plan.Platform, error) {
	n = resolve(n)
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		p, err := plan.BuiltinPlatform(n.Value)
		if err != nil {
			return plan.Platform{}, errorf(n.Line, "%s: %s", at, unknownPlatform(n.Value))
		}
		return p, nil
	case n.Kind == yaml.MappingNode:
		var doc platformDoc
		if err := decodeStrict(n, at, &doc); err != nil {
			return plan.Platform{}, err
		}
		return doc.build(n, at)
	}
	return plan.Platform{}, errorf(n.Line, "%s: want a built-in platform name or a mapping, got %s", at, describe(n))
}

// build starts from the base platform, if any, and applies the rest of the
// mapping n: a bank whose name the base has is changed key by key, another
// is appended.
func (doc platformDoc) build(n *yaml.Node, at string) (plan.Platform, error) {
	var p plan.Platform
	if doc.Base != nil {
		base, err := plan.BuiltinPlatform(*doc.Base)
		if err != nil {
			return plan.Platform{}, errorf(mappingValue(n, "base").Line, "%s.base: %s", at, unknownPlatform(*doc.Base))
		}
		p = base
	}
	if doc.Name != nil {
		p.Name = *doc.Name
	}
	if doc.ConstantBank != nil {
		p.ConstantBank = *doc.ConstantBank
	}
	given := map[string]int{}
	for i, bn := range mappingValue(n, "banks").Content {
		if isNull(resolve(bn)) {
			continue // an absent bank, as checkShape has it
		}
		bat := fmt.Sprintf("%s.banks[%d]", at, i)
		var b plan.Bank
		if err := bn.Decode(&b); err != nil {
			return plan.Platform{}, yamlError(err)
		}
		if b.Name == "" {
			return plan.Platform{}, errorf(bn.Line, "%s: name is missing", bat)
		}
		if j, dup := given[b.Name]; dup {
			return plan.Platform{}, errorf(bn.Line, "%s: bank %q is already given at %s.banks[%d]", bat, b.Name, at, j)
		}
		given[b.Name] = i
		k := slices.IndexFunc(p.Banks, func(x plan.Bank) bool { return x.Name == b.Name })
		if k < 0 {
			p.Banks = append(p.Banks, b)
			continue
		}
		// Decoding onto the base's bank sets only the keys the node has, so
		// a key given as 0 or false still overrides; a null one does not.
		if err := bn.Decode(&p.Banks[k]); err != nil {
			return plan.Platform{}, yamlError(err)
		}
	}
	return p, nil
}

// unknownPlatform says that name is not a built-in platform, as
// plan.BuiltinPlatform does, for messages with a line.
func unknownPlatform(name string) string {
	return fmt.Sprintf("unknown platform %q (known: %s)", name, strings.Join(plan.BuiltinPlatformNames(), ", "))
}
