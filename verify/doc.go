// Package verify checks a memory plan independently of the planner that made
// it, in the spirit of MiniMalloc's validator: naively, pair by pair, so that
// it is obviously right even where it is slow.
//
// Input: a *graph.Model and the plan.json bytes written for it
// (docs/plan-format.md, schema_version 4: tensor_allocs and
// tensor_lifetimes keyed by tensor id "<subgraph>:<tensor>", arena_usages,
// persistent_arenas and constant_arenas keyed by memory, as heliaAOT's
// MemoryPlan), plan.json and the C sources written with it, or, for
// allocator tests, a list of Blocks and a capacity. Output: every
// Violation found, nil when the plan is clean. The inputs are never
// changed. Plan and Blocks never panic on bad input; a plan that cannot be
// read, or of another schema_version, is reported as Malformed.
//
// Plan reads the artifact users ship rather than the planner's in-memory
// value, so that emitter bugs are caught as well as planner bugs. It walks
// the model's timeline itself, in the order the plan's schedule gives (the
// step rules of docs/plan-format.md and the liveness package doc, written
// again here), and checks that:
//
//   - the schedule runs every operator exactly once per run of its
//     subgraph, in one order per subgraph, a called subgraph's operators
//     right after their caller's (so inside its span), each with the steps
//     that order gives; and that an operator that writes a tensor and one
//     that reads or writes it, and the operators that touch one stateful
//     tensor or one resource variable (themselves or through the subgraphs
//     they run), keep the model's order (BadSchedule);
//   - every tensor an operator reads or writes, and every subgraph input and
//     output, that needs bytes has an allocation (Unplaced), even when
//     skipped_tensors lists it, of the right role (WrongClass): persistent
//     for is_variable state, constant for data in a model buffer, scratch
//     otherwise; kernel scratch is scratch (WrongClass);
//   - every allocation of every kind (tensors, resource variables, kernel
//     scratch) lies inside the arena its binding names by id (OutOfBounds)
//     at a multiple of the plan's alignment and of its bank's, when the bank
//     sets one (Misaligned);
//   - the arenas of each bank with a capacity fit it together: scratch,
//     persistent and constant arenas in the bank, and the images of staged
//     constant arenas copied from it (OverCapacity);
//   - scratch and persistent arenas, and staged copies, are in writable
//     banks; cold constants (unless the bank has boot_init) and staging
//     sources in read-only ones (WrongClass);
//   - every allocation is where the plan's rules put it, recomputed from
//     rules (a rule naming the tensor by index or name beats one naming its
//     class, the later of equals wins, an alias group follows its root;
//     resource variables and kernel scratch follow class rules): a tensor a
//     tensor or name rule names is in exactly that memory; any other
//     allocation is in the memory its class rule or the default (the first
//     writable bank in allocation order; for constants the constant bank)
//     asks for, or has spills entries that move it there; a constant is
//     staged from its rule's source (RuleViolated);
//   - no two scratch allocations live at a common step share a byte,
//     pair by pair, unless they are members of one alias group that hold
//     one value (one views the other's bytes, through views only) or of
//     which one is written in place over the other at the only step they
//     share, or that the model's own offline plan puts there (below); no
//     two persistent allocations share a byte, and no two
//     constants share a byte unless they are one model buffer at one
//     offset (Overlap);
//   - every alias_of names a scratch root in the same arena, the member
//     lies at the root's offset plus its alias_offset (present only when
//     not 0), neither is an input or output of a subgraph (with
//     overwrite_inputs the root may be a model input), and view operators
//     (RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST), input 0 to output 0, each
//     output over exactly its input's bytes, and in-place writes lead from
//     the root to the member through members of the group (BadAlias);
//   - shared bytes are written by nobody else: between the write that
//     gives a member its value and each read of it, in the schedule's
//     order, no operator writes another member over its bytes, but a view
//     over exactly its input's bytes (which writes nothing) and an
//     in-place write at its own operator, and an exact-overlap copy that
//     writes the value the member holds (checkSharing; BadAlias);
//   - every exact_overlap_copy entry names an exact-overlap contract of
//     the plan's kernel library (kernels.Library.ExactOverlap, computed
//     here from the model) for its operator, and the tensor lies exactly
//     where the contract puts it relative to the other operand, a member
//     of its group: a concatenation's input in its slot of the output, a
//     slice's output over its block of the input (one element off is a
//     violation); members joined so hold one value where they overlap,
//     and the copying kernel's write of them is no clobber (copies.go;
//     BadAlias);
//   - every in_place entry names a contract of the plan's kernel library
//     that lets its operator, which runs once and calls nothing, write the
//     tensor over the input, a member of its group that lies where the
//     contract lets it lie relative to the tensor; and no other member of
//     the group that shares bytes with the tensor is used both before and
//     after that write (BadAlias);
//   - every operand of an Ethos-U operator (CUSTOM "ethos-u") from its
//     scratch on (scratch, fast scratch, inputs, outputs) that the model's
//     own offline plan (OfflineMemoryAllocation, read here again) places
//     lies in the scratch's arena at the model's offset from the scratch:
//     the command stream reaches them through the scratch's base address
//     (ownplan.go cites TFLM's kernel and Vela) (OwnOffset). Such tensors
//     may form one alias group with no view or in-place write between
//     them, and share bytes as the model's plan puts them: the scratch
//     regions with any of them, two others only at the step of an Ethos-U
//     operator that has both;
//   - every use of a scratch tensor falls inside its declared lifetime, and
//     kernel scratch lives at least while its operator runs
//     (UseOutsideLifetime);
//   - every resource variable (VAR_HANDLE operators with one container and
//     shared_name; handles followed through WHILE and IF) that is assigned
//     or read a value of non-zero size has a resource_variables entry
//     (Unplaced) at least as large as every such value (OutOfBounds);
//   - each arena's used and size, and its heliaAOT entry's lower_bound,
//     lower_bound_without_aliases, fragmentation, peak_step and
//     peak_tensors agree with its allocations (HeightMismatch). An alias
//     group is one buffer, from its lowest member's first byte to its
//     highest member's last, live over the union of its members'
//     lifetimes, and peak_tensors names each buffer live at peak_step by
//     its root.
//   - plan_hash is the hash of the plan's own arenas, allocations and
//     operator order, recomputed (hash.go; docs/plan-format.md, plan_hash)
//     without the planner's code, so a plan changed after heliac wrote it
//     is seen (HashMismatch);
//   - every name is written as docs/plan-format.md ("Names") says and
//     stands for the model's bytes (names.go; else Malformed).
//
// A plan made for a model rewritten stripe by stripe records the rewrite
// (stripes); Plan, PlanAndC and C are then given the original model, and
// first rebuild the rewritten one from it and the record with this
// package's own code (stripes.go, following docs/stripes.md; a region
// whose halo is "cache", stripecache.go; more than 10 stripes joined in
// groups, stripegroups.go): a record that is not a valid region of the
// original, whose rows do not cover the output once and in order, whose
// k is not 2 to 100, whose cached halos cannot be built (a
// stripe that would compute no row of a tensor) or whose MACs differ
// from the rebuild's is BadStripes; a halo other than "recompute" or
// "cache" is Malformed. Rewrite and RewriteFile compare the
// model heliac emits (in memory, or read back from the .tflite it wrote)
// with the rebuild, operator by operator and tensor by tensor
// (RewriteMismatch).
//
// C checks the C module written with a plan (<prefix>.h and <prefix>.c)
// against its plan.json: the plan hash both files name, and every figure
// of the arena macros and arrays, the tensor and kernel scratch tables, the
// resource variable and input/output macros and the accessors (CMismatch).
// It reads the tables heliac writes with a line reader of their few shapes
// (cparse.go), not a C parser.
//
// Shared checks a set's shared module (heliac_shared.h and .c) against the
// plans of a directory: every shared arena a buffer of its shared_size,
// aligned to a multiple of each arena's alignment, in its memory's section,
// and bound to exactly the arenas of its name (CMismatch).
//
// A plan that does not describe the model is Malformed: two arenas with one
// id or name, an arena name C cannot use, an unknown provider, an
// allocation or heliaAOT arena entry in an arena that arenas does not list
// or of another role or memory, an arena without its entry in the map of
// its role under its memory, or one whose figures it does not repeat, an
// entry whose memory is not its key, two arenas of one role in one memory
// (the maps cannot key them), an arena_usages or persistent_arenas key that
// is not a writable bank, a source_memory that breaks heliaAOT's rule (a
// constant arena's is its memory when cold, the bank it is copied from when
// staged, never null; each constant binding and its constant_arenas entry
// repeat it, whose mode is cold exactly when it is the memory; scratch and
// persistent arenas and bindings have none), a tensor id key that is not
// canonical or whose entry names another tensor, a lifetime whose key has
// no scratch tensor_allocs entry, a key given twice in one JSON object, a
// tensor or operator that does not exist or is allocated twice, a size or
// name that is not the tensor's, a
// schedule entry under another operator's name, a memory that is not a
// bank of platform, a platform with duplicate or bad banks, a rule with
// other than one selector, a spills entry that does not lead from where the
// rules put its allocation to where it is, between writable banks in
// allocation order, or that moves a pinned tensor, a scratch arena whose
// capacity is not its bank's, model.steps other than the timeline's length,
// kernel scratch living longer than its operator, a variable no VAR_HANDLE
// names or whose size or handles are not the model's, a dynamic_shape that
// does not match the shape signature, a skipped tensor that is unused,
// allocated or not empty for the reason given, or a used tensor that takes
// no bytes and is not skipped. A document with a missing or mistyped key,
// or a schedule whose runs do not form a run of the model, is reported for
// that alone, since checks over incomplete entries or an undefined
// timeline would only invent further violations.
//
// The checks do not depend on each other's order: index builds every
// shared index (banks, arenas by id, allocations by key, lifetimes, alias
// groups, resource variables) first, and each check only reads them.
//
// The checks that relate allocations to one another stay near-linear in
// the plan, so that a plan at the planner's limits (32,768 steps) is
// checked in well under a second: alias chains are walked once, each
// member remembering where its walk ends (a chain of n members walked from
// each would cost n²); the members used across an in-place write are found
// in a segment tree over first uses; overlapping allocations are found by
// a sweep over steps with the live ones in a tree over their byte ranges
// (sweep.go), pairs that hold one value skipped as a whole; group widths by
// a sweep over lifetimes. Each reports exactly what the naive form would,
// in the same order (sweep_test.go compares them), and TestWorkNearLinear
// counts the work.
//
// Blocks does the space-and-time part alone, for tests of allocators that
// produce offsets without a plan.json (plan's).
//
// # Independence
//
// The non-test code imports only the standard library, graph and kernels
// (the kernel libraries' in-place contracts: data read from the kernels'
// sources, which the TFLM interop tests prove on a real runtime); never
// liveness, plan, plan/dsa, emit or tflite. A checker that shared the
// planner's timeline or lifetimes would agree with the planner's bugs, so
// verify recomputes what it needs in its own, deliberately simple way. A fix
// to the verifier never touches the planner, and the reverse.
// imports_test.go enforces the rule.
package verify
