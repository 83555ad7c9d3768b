"""Generate ``aliaslint/data/ops.json`` from the torchgen files shipped in the installed torch.

Run ``python -m aliaslint.ops_gen`` (``--check`` compares instead of writing; ``-o PATH`` writes
elsewhere).  Inputs:

* ``torchgen/packaged/ATen/native/native_functions.yaml``: parsed with torchgen's own parser
  (``torchgen.gen.parse_native_yaml`` -> ``NativeFunction`` / ``FunctionSchema``).  Alias
  annotations give views (``Tensor(a) self -> Tensor(a)``), in-place / mutable arguments
  (``Tensor(a!)``) and ``out=`` overloads.
* ``torchgen/packaged/autograd/derivatives.yaml``: loaded with torchgen's
  ``load_derivatives``.  The tensors a backward formula reads (``saved_inputs`` /
  ``saved_outputs`` of type Tensor, Tensor?, Tensor[]) are what autograd saves.  Forward-mode
  formulas are ignored.
* ``aliaslint/data/ops_manual.toml``: hand facts for APIs no yaml describes.
* Probes on sample tensors (CPU, tiny) for two facts the yaml does not state: whether a view's
  result is non-contiguous for a contiguous input, and whether an op without alias annotations
  (a composite op) may nevertheless return its input or a view of it ("sometimes_alias").
  Saves of composite ops without a derivatives entry are derived from the ATen ops they
  decompose into (traced with a TorchDispatchMode) and the derivatives of those.

A build tool, left out of the wheel.  Only this package and the torch tests import torch;
``aliaslint.ops`` reads the JSON.  Modules:

* ``schema``: torchgen loading, per-overload facts from the schema, saves from derivatives.yaml;
* ``samples``: sample arguments for calling an overload on tiny CPU tensors;
* ``probes``: what torch does on those calls (aliasing, layout, version bumps, conversions);
* ``decompose``: saves of composite ops from the ATen ops they decompose into;
* ``merge``: one entry for a user-visible name from its overloads;
* ``names``: the user-visible names, dunders, properties, hand entries and modules;
* ``main``: the whole table, its JSON text and the command line.
"""
