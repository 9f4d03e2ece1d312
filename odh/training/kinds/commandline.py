"""How `odh training create` speaks of a kind's jobs, so that the command line names no kind
itself: the flags only the kind's jobs take (the parser offers them, the spec takes their
values), the flags that set the spec's fields where the kind names them its own way (a
TrainJob's `--nodes`), where each field sits in the kind's manifest (what a problem found
in a file given with -f is said to be about), and what a job of the kind cannot be created
without. A kind the dashboard creates carries one (`SpecModel.command_line`)."""

from __future__ import annotations

from dataclasses import dataclass

from odh.training.i18n import LazyText

# Where the fields every kind's manifest writes alike sit (its metadata).
METADATA_FIELDS = (
    ("name", "metadata.name"), ("namespace", "metadata.namespace"),
    ("queue_name", "metadata.labels (kueue.x-k8s.io/queue-name)"),
    ("labels", "metadata.labels"), ("annotations", "metadata.annotations"),
    ("description", "metadata.annotations (opendatahub.io/description)"),
)


@dataclass(frozen=True)
class KindFlag:
    """A flag of `odh training create` only this kind's jobs take, and the spec's field
    it sets."""

    flag: str
    field: str
    help: LazyText
    choices: tuple[str, ...] = ()
    whole_number: bool = False

    @property
    def dest(self) -> str:
        """Its value's name among the parsed arguments (argparse's: "--runtime-kind" ->
        "runtime_kind")."""
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class CommandLine:
    # what is said when NAME, --image or (`needs_command`) the command is missing, with an
    # example of the kind's create: "Missing %(what)s: e.g. odh training create ..."
    missing: LazyText
    # the flags only this kind's jobs take, in the order they are applied
    own_flags: tuple[KindFlag, ...] = ()
    # what is said when a job of another kind is given one of `own_flags`
    # (%(flags)s: the flags given, %(kind)s: the other kind)
    not_for_others: LazyText | None = None
    # the spec's field -> the flag that sets it, where the kind names it its own way
    flags: tuple[tuple[str, str], ...] = ()
    # the spec's field -> where it sits in the kind's manifest
    manifest_fields: tuple[tuple[str, str], ...] = METADATA_FIELDS
    # a job of the kind needs a command (False: its runtime's container has its own)
    needs_command: bool = True

    def __post_init__(self) -> None:
        if self.own_flags and self.not_for_others is None:
            raise ValueError("a kind with flags of its own says what they are to other kinds' "
                             "jobs (not_for_others)")

    def flag_for(self, field: str) -> str | None:
        """The flag that sets `field` for this kind's jobs where the kind names it its own
        way (None: the command line's own name for it)."""
        return {**{f.field: f.flag for f in self.own_flags}, **dict(self.flags)}.get(field)

    def manifest_field(self, field: str) -> str | None:
        """Where `field` sits in this kind's manifest (None: nowhere it can say)."""
        return dict(self.manifest_fields).get(field)
