package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SetPlan is one model's plan in a directory that may hold a set of models
// sharing scratch arenas: the model's C prefix (its plan file's name
// before ".plan.json") and the plan.json bytes.
type SetPlan struct {
	Prefix string
	JSON   []byte
}

// sharedName is the prefix of a set's shared module (docs/plan-format.md,
// and README "Several models in one firmware"), written again here.
const sharedName = "heliac_shared"

// sharedMacro is the shared module's macro prefix.
const sharedMacro = "HELIAC_SHARED"

var (
	sharedExtern = regexp.MustCompile(`^extern uint8_t heliac_shared_(\w+)\[(\w+)\];$`)
	sharedDef    = regexp.MustCompile(`^(\w+)_ALIGNAS\((\w+)\) (\w+)_PUT_IN_(\w+) uint8_t heliac_shared_(\w+)\[(\w+)\];$`)
	sharedBind   = regexp.MustCompile(`^if \((\w+)_bind_arena\((\w+)_ARENA_(\w+), heliac_shared_(\w+), sizeof heliac_shared_(\w+)\) != (\w+)_OK\) \{$`)
	cInclude     = regexp.MustCompile(`^#include "([^"]+)"$`)
)

// Shared checks a set's shared module, heliac_shared.h (header) and
// heliac_shared.c (source), against the plans of a directory, sharing
// nothing with the emitter. The set is the plans with an arena whose
// provider is "shared"; every such arena name must be, in the header, a
// buffer HELIAC_SHARED_<NAME>_SIZE bytes long, the arenas' shared_size
// (which every plan must give alike, at least each arena's size), aligned
// to HELIAC_SHARED_<NAME>_ALIGNMENT, a multiple of every arena's
// alignment, and declared extern; in the source, defined once with those
// two macros in the section of the arenas' memory (<P>_PUT_IN_<BANK> of a
// model of the set), and bound by heliac_shared_bind to exactly the arenas
// of that name of the set's models. A buffer no plan shares, a plan's
// shared arena without a buffer, and header and source of no set (nil)
// while a plan shares an arena are CMismatch. With no plan sharing an
// arena and no module, there is nothing to check.
func Shared(plans []SetPlan, header, source []byte) []Violation {
	var r report
	type user struct {
		prefix string
		path   string // "<prefix>.plan.json arenas[i]"
		size   int64
		align  int64
	}
	type buffer struct {
		memory string
		size   int64 // shared_size
		users  []user
	}
	bufs := map[string]*buffer{}
	var names []string
	prefixes := map[string]bool{} // upper-case prefixes of the set
	for _, p := range plans {
		doc, bad := decode(p.JSON)
		if doc == nil {
			for _, v := range bad {
				r.add(Malformed, "%s.plan.json: %s", p.Prefix, v.Msg)
			}
			continue
		}
		for _, a := range doc.arenas {
			if a.provider != "shared" {
				continue
			}
			where := fmt.Sprintf("%s.plan.json %s", p.Prefix, a.path)
			prefixes[strings.ToUpper(p.Prefix)] = true
			b := bufs[a.name]
			if b == nil {
				b = &buffer{memory: a.memory, size: a.sharedSize}
				bufs[a.name] = b
				names = append(names, a.name)
			}
			switch {
			case a.memory != b.memory:
				r.add(CMismatch, "%s: shared arena %s is in memory %s, but in %s for %s", where, a.name, a.memory, b.memory, b.users[0].path)
			case a.sharedSize != b.size:
				r.add(HeightMismatch, "%s: shared arena %s has shared_size %d, but %d for %s", where, a.name, a.sharedSize, b.size, b.users[0].path)
			case a.size > a.sharedSize:
				r.add(HeightMismatch, "%s: shared arena %s needs %d bytes, more than its shared_size %d", where, a.name, a.size, a.sharedSize)
			}
			b.users = append(b.users, user{prefix: p.Prefix, path: where, size: a.size, align: a.alignment})
		}
	}
	slices.Sort(names)
	if len(names) == 0 && header == nil && source == nil {
		return nil
	}
	if header == nil || source == nil {
		r.add(CMismatch, "the plans share arena(s) %s, but %s.h or %s.c is missing", strings.Join(names, ", "), sharedName, sharedName)
		return r
	}
	h := parseC(sharedName+".h", header)
	externs := map[string]string{} // buffer → its size macro
	defs := map[string][]string{}  // buffer → the definition's submatches
	var bound []string             // "prefix arena", as bound
	includes := map[string]bool{}
	for i, text := range strings.Split(string(header), "\n") {
		if m := sharedExtern.FindStringSubmatch(strings.TrimSpace(text)); m != nil {
			if _, dup := externs[m[1]]; dup {
				r.add(CMismatch, "%s.h:%d: buffer heliac_shared_%s is declared twice", sharedName, i+1, m[1])
			}
			externs[m[1]] = m[2]
		}
	}
	for i, text := range strings.Split(string(source), "\n") {
		text = strings.TrimSpace(text)
		n := i + 1
		if m := cInclude.FindStringSubmatch(text); m != nil {
			includes[m[1]] = true
		}
		if m := sharedDef.FindStringSubmatch(text); m != nil {
			if defs[m[5]] != nil {
				r.add(CMismatch, "%s.c:%d: buffer heliac_shared_%s is defined twice", sharedName, n, m[5])
			}
			defs[m[5]] = m
		}
		if m := sharedBind.FindStringSubmatch(text); m != nil {
			mp, mP, arena := m[1], m[2], m[3]
			switch {
			case m[4] != m[5]:
				r.add(CMismatch, "%s.c:%d: binds heliac_shared_%s with the size of heliac_shared_%s", sharedName, n, m[4], m[5])
			case strings.ToUpper(mp) != mP || m[6] != mP:
				r.add(CMismatch, "%s.c:%d: binds with the names of several models (%s, %s, %s)", sharedName, n, mp, mP, m[6])
			case strings.ToUpper(m[4]) != arena:
				r.add(CMismatch, "%s.c:%d: binds buffer heliac_shared_%s to arena %s of %s", sharedName, n, m[4], strings.ToLower(arena), mp)
			}
			bound = append(bound, mp+" "+m[4])
		}
	}
	if !includes[sharedName+".h"] {
		r.add(CMismatch, "%s.c does not include %s.h", sharedName, sharedName)
	}
	for _, name := range names {
		b := bufs[name]
		up := strings.ToUpper(name)
		sizeMacro, alignMacro := sharedMacro+"_"+up+"_SIZE", sharedMacro+"_"+up+"_ALIGNMENT"
		size, ok := h.defines[sizeMacro]
		switch got, err := strconv.ParseInt(strings.TrimSuffix(size.value, "u"), 10, 64); {
		case !ok:
			r.add(CMismatch, "%s.h: no %s for shared arena %s (%s)", sharedName, sizeMacro, name, b.users[0].path)
		case err != nil || got != b.size:
			r.add(CMismatch, "%s.h:%d: %s is %s, but shared arena %s has shared_size %d (%s)", sharedName, size.line, sizeMacro, size.value, name, b.size, b.users[0].path)
		}
		align, ok := h.defines[alignMacro]
		got, err := strconv.ParseInt(strings.TrimSuffix(align.value, "u"), 10, 64)
		switch {
		case !ok:
			r.add(CMismatch, "%s.h: no %s for shared arena %s", sharedName, alignMacro, name)
		case err != nil || got <= 0:
			r.add(CMismatch, "%s.h:%d: %s is %s, not a positive number", sharedName, align.line, alignMacro, align.value)
		default:
			for _, u := range b.users {
				if u.align > 0 && got%u.align != 0 {
					r.add(CMismatch, "%s.h:%d: %s is %d, not a multiple of the alignment %d of %s", sharedName, align.line, alignMacro, got, u.align, u.path)
				}
			}
		}
		if m, ok := externs[name]; !ok || m != sizeMacro {
			r.add(CMismatch, "%s.h: no declaration extern uint8_t heliac_shared_%s[%s] for shared arena %s", sharedName, name, sizeMacro, name)
		}
		d := defs[name]
		switch bank := strings.ToUpper(cIdent(b.memory)); {
		case d == nil:
			r.add(CMismatch, "%s.c: no definition of heliac_shared_%s for shared arena %s (%s)", sharedName, name, name, b.users[0].path)
		case d[2] != alignMacro || d[6] != sizeMacro:
			r.add(CMismatch, "%s.c: heliac_shared_%s is defined with %s and %s, not %s and %s", sharedName, name, d[2], d[6], alignMacro, sizeMacro)
		case !prefixes[d[1]] || !prefixes[d[3]]:
			r.add(CMismatch, "%s.c: heliac_shared_%s is placed with the macros of %s and %s, not of a model of the set", sharedName, name, d[1], d[3])
		case d[4] != bank:
			r.add(CMismatch, "%s.c: heliac_shared_%s is placed by %s_PUT_IN_%s, but shared arena %s is in memory %s", sharedName, name, d[3], d[4], name, b.memory)
		}
		for _, u := range b.users {
			if !slices.Contains(bound, u.prefix+" "+name) {
				r.add(CMismatch, "%s.c: heliac_shared_bind does not bind heliac_shared_%s to arena %s of %s (%s)", sharedName, name, name, u.prefix, u.path)
			}
			if !includes[u.prefix+".h"] {
				r.add(CMismatch, "%s.c does not include %s.h", sharedName, u.prefix)
			}
		}
	}
	for _, name := range sortedKeys(externs) {
		if bufs[name] == nil {
			r.add(CMismatch, "%s.h declares heliac_shared_%s, which no plan shares", sharedName, name)
		}
	}
	for _, name := range sortedKeys(defs) {
		if bufs[name] == nil {
			r.add(CMismatch, "%s.c defines heliac_shared_%s, which no plan shares", sharedName, name)
		}
	}
	for _, pb := range bound {
		prefix, name, _ := strings.Cut(pb, " ")
		ok := false
		if b := bufs[name]; b != nil {
			for _, u := range b.users {
				ok = ok || u.prefix == prefix
			}
		}
		if !ok {
			r.add(CMismatch, "%s.c: heliac_shared_bind binds heliac_shared_%s to %s, whose plan shares no arena %s", sharedName, name, prefix, name)
		}
	}
	if len(r) == 0 {
		return nil
	}
	return r
}
