"""The hand-written validation steps every config section uses (first failure wins).

`ConfigValidationError` and the field readers live below both the section rows
(`sections.py`) and the document (`schema.py`), so each section parses itself with the
same exact texts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, TypeVar

from pct_runtime.datarecord import replace
from pct_runtime.jsontypes import JSONMapping, JSONObject

if TYPE_CHECKING:
    import dataclasses

ApprovalModes: tuple[Literal["confirm", "always"], ...] = ("confirm", "always")

_Choice = TypeVar("_Choice", bound=str)


class ConfigValidationError(ValueError):
    """A rejected document: `str()` is the detail (`<path> must <requirement>`).

    Both parts are fixed text; the rejected value never appears, because a config file may
    hold anything (including pasted secrets) and the detail is shown in status lines.
    """

    def __init__(self, path: str, requirement: str) -> None:
        super().__init__(f"{path} must {requirement}")
        self.path = path
        self.requirement = requirement


class Frozen:
    """Base of the config models, each a frozen record (`pct_runtime.datarecord`, a
    dataclass without dataclasses' start-up cost): an immutable snapshot, because
    the runtime shares one config between sessions and threads.

    Edit a draft with `model_copy(update={...})`. Unknown JSON fields are not kept here;
    the store keeps the raw document beside the model and merges into it on save.

    The readers below check every field of a file with the spec's exact texts, and
    `ConfigStore.save` parses the document it is about to write, so a model built in code
    is checked there too. The models were pydantic's; importing pydantic and building its
    model classes was the largest part of `pct status`'s start-up, for validators nothing ran.
    """

    if TYPE_CHECKING:  # what `dataclasses.replace` asks of its argument
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def model_copy(self, *, update: Mapping[str, object] | None = None) -> Self:
        """A copy with the fields of `update` replaced (not validated, as before)."""
        return replace(self, **(update or {}))


def is_object(value: object) -> bool:
    return isinstance(value, dict)


def field_path(path: str, key: str) -> str:
    return key if path == "" else f"{path}.{key}"


def boolean(section: JSONMapping, path: str, key: str, default: bool) -> bool:
    if key not in section:
        return default
    value = section[key]
    if type(value) is not bool:
        raise ConfigValidationError(field_path(path, key), "be true or false")
    return value


def choice(
    section: JSONMapping, path: str, key: str, values: tuple[_Choice, ...], default: _Choice
) -> _Choice:
    if key not in section:
        return default
    value = section[key]
    if not isinstance(value, str) or value not in values:
        raise ConfigValidationError(field_path(path, key), f"be one of {', '.join(values)}")
    return value


def raw_section(raw: JSONMapping, key: str) -> JSONObject:
    value = raw.get(key)
    return copy_json(value) if isinstance(value, dict) else {}


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON document (objects, arrays, scalars): `copy.deepcopy`'s result
    for these, without importing `copy` (and weakref) into every command reading the config."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def overlay(base: JSONObject, known: JSONMapping) -> JSONObject:
    """Known fields over a stored object: stored keys keep their position, new ones append."""
    for key, value in known.items():
        base[key] = value
    return base
