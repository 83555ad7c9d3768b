"""The runtime predicates that confirm static findings, by the name a rule declares.

A finding's witness names its predicate (``Rule.confirm``); ``aliaslint.confirm``
evaluates it while the program runs.  Each predicate says which run-time events feed it:
the line hook at the witness's rows (every predicate), and the ATen ops those rows run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Predicate:
    name: str
    watches_ops: bool  # fed the ATen ops its rows run (writes, views), not only their lines
    claim: str  # what holds when a finding is confirmed


PREDICATES = {predicate.name: predicate for predicate in (
    Predicate("saved", True, "a tensor autograd saved was written before its backward ran"),
    Predicate("clobbered", True, "an in-place activation wrote memory another live name or "
              "a pending backward still needs"),
    Predicate("leaf", True, "an in-place op wrote a leaf that requires grad with grad mode on"),
    Predicate("shared-write", True, "an in-place write hit memory another live name shares"),
    Predicate("view", True, "`view` received a non-contiguous tensor"),
    Predicate("copy-write", True, "an in-place write hit a temporary no live name holds"),
    Predicate("source-write", True, "an in-place write reached the source of a call that "
              "returns its source only sometimes"),
    Predicate("numpy", True, "a live array and a live tensor shared the written memory"),
    Predicate("replicated", True, "an in-place write hit several entries of one container"),
    Predicate("snapshot", False, "a tensor a snapshot holds was written while its name held it"),
    Predicate("argument", False, "a call wrote its tensor argument in place"),
    Predicate("compare", False, "a sharing test compared tensors or storages by identity or "
              "address"),
    Predicate("storage", False, "`.storage()` was called on a tensor, or a typed storage "
              "class was used"),
)}
