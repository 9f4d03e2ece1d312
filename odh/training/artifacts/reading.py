"""A job's artifacts as its page shows them: every output directory it names, listed (or
why not), and the newest checkpoint among them."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from odh.training.artifacts.lister import ArtifactsRefused, ListerSettings, list_output
from odh.training.artifacts.listing import Checkpoint, Listing
from odh.training.artifacts.outputs import JobOutputs, OutputDir, find_outputs
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import JobKind
from odh.training.paths import get_path

MOST_OUTPUTS = 3  # output directories read for one page (each is one pod)


@dataclass(frozen=True)
class OutputListing:
    output: OutputDir
    listing: Listing | None = None
    refused: ArtifactsRefused | None = None


    @property
    def logdirs(self) -> list[str]:
        """Where the job's containers see its TensorBoard event files."""
        if self.listing is None:
            return []
        return [posixpath.join(self.output.path, d).rstrip("/") for d in self.listing.event_dirs]


@dataclass(frozen=True)
class Artifacts:
    found: JobOutputs
    listings: list[OutputListing] = field(default_factory=list)

    @property
    def newest_checkpoint(self) -> tuple[int, OutputDir, Checkpoint] | None:
        """(output index, output, checkpoint) of the most recently written checkpoint."""
        newest = [(i, o.output, o.listing.newest_checkpoint)
                  for i, o in enumerate(self.listings)
                  if o.listing is not None and o.listing.newest_checkpoint is not None]
        if not newest:
            return None
        return max(newest, key=lambda item: item[2].entry.modified)  # type: ignore[union-attr]

    @property
    def refusal(self) -> ArtifactsRefused | None:
        """The first reason a directory could not be read."""
        return next((o.refused for o in self.listings if o.refused is not None), None)

    @property
    def file_count(self) -> int:
        return sum(len(o.listing.files) for o in self.listings if o.listing is not None)

    @property
    def total_size(self) -> int:
        return sum(o.listing.total_size for o in self.listings if o.listing is not None)


def read_artifacts(client: ClusterClient, kind: JobKind, job: dict,
                   settings: ListerSettings) -> Artifacts:
    """List each output directory of the job (at most MOST_OUTPUTS) with the person's
    client; a refusal of the cluster's (no right to create pods) is not asked again."""
    found = find_outputs(kind, job)
    namespace = str(get_path(job, ["metadata", "namespace"]) or "")
    name = str(get_path(job, ["metadata", "name"]) or "")
    listings: list[OutputListing] = []
    forbidden: ArtifactsRefused | None = None
    for output in found.outputs[:MOST_OUTPUTS]:
        if forbidden is not None:
            listings.append(OutputListing(output, refused=forbidden))
            continue
        try:
            listings.append(OutputListing(output, list_output(client, namespace, name, output,
                                                              settings)))
        except ArtifactsRefused as refused:
            listings.append(OutputListing(output, refused=refused))
            if refused.reason == "forbidden":
                forbidden = refused
    return Artifacts(found, listings)
