"""The base of every talkie/1 model read from the wire."""

from __future__ import annotations

from pydantic import AliasGenerator, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Base of every model read from the wire: camelCase names, unknown fields ignored.

    Each model's validator is built when it is first used, not when it is imported: a run
    reads a few of them (`talkie ask` the manifest), and building them all took ~20 ms of
    every start (issue 24).
    """

    model_config = ConfigDict(
        alias_generator=AliasGenerator(validation_alias=to_camel, serialization_alias=to_camel),
        populate_by_name=True,
        extra="ignore",
        frozen=True,
        defer_build=True,
    )
