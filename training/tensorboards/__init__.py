"""A job's TensorBoard, started on request from its Artifacts tab and reached through the
dashboard only (docs/artifacts.md, "TensorBoard"): `boards` keeps this process's
TensorBoards and stops them when unused, `local` and `pods` run them, `proxy` forwards a
person's requests to one."""
