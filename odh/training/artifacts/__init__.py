"""What a run leaves behind: where a job writes (`outputs`), what is there (`listing`, read
by a short-lived pod of the person's: `lister`) and how a failed run is resumed from a
checkpoint (`resume`). docs/artifacts.md says how a job declares them."""
