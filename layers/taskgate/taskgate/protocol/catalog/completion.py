"""``completion/complete`` for prompt arguments and resource-template variables,
for both eras."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from ...codes import INVALID_PARAMS
from ...tools.catalog import Completer, CompletionContext, choices_of, complete
from ..calls.services import Services
from ..era import Method
from ..wire.errors import RpcError
from ..wire.exchange import Call
from ..wire.params import Params
from .callers import OwnerTasks
from .resources import MAX_URI_LENGTH, ResourceMethods

Short = Annotated[str, StringConstraints(max_length=4096)]


class _Part(BaseModel):
    # Schemas are built on first use, not at import: most cold starts serve one method.
    model_config = ConfigDict(strict=True, extra="allow", defer_build=True)


class PromptRef(_Part):
    type: Literal["ref/prompt"]
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)]


class ResourceRef(_Part):
    type: Literal["ref/resource"]
    uri: Annotated[str, StringConstraints(min_length=1, max_length=MAX_URI_LENGTH)]


class Argument(_Part):
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    value: Short


class CompletionScope(_Part):
    arguments: dict[str, Short] | None = None


class Complete(Params):
    ref: PromptRef | ResourceRef
    argument: Argument
    context: CompletionScope | None = None


class CompletionMethods:
    def __init__(self, services: Services, resources: ResourceMethods) -> None:
        self._s = services
        self._resources = resources

    def methods(self) -> list[Method]:
        return [Method("completion/complete", self.complete, Complete)]

    def complete(self, call: Call, params: Complete) -> dict[str, Any]:
        name = params.argument.name
        completer: Completer | None
        if isinstance(params.ref, PromptRef):
            prompt = self._s.prompts.get(params.ref.name)
            if prompt is None:
                raise RpcError(INVALID_PARAMS, f"Unknown prompt: {params.ref.name}")
            if name not in prompt.argument_names():
                raise RpcError(INVALID_PARAMS, f"Prompt {prompt.name} has no argument {name}")
            completer = prompt.complete.get(name) or choices_of(prompt.arguments_model, name)
        else:
            template = self._resources.template(params.ref.uri)
            if template is None:
                raise RpcError(INVALID_PARAMS, f"Unknown resource template: {params.ref.uri}")
            if name not in template.variables():
                raise RpcError(INVALID_PARAMS, f"Resource template {template.uri} has no variable {name}")
            completer = template.complete.get(name) or choices_of(template.variables_model, name)
        ctx = CompletionContext(
            owner=call.owner,
            tasks=OwnerTasks(self._s.tasks, call.owner),
            arguments=dict((params.context.arguments if params.context else None) or {}),
        )
        return complete(completer, params.argument.value, ctx).to_result()
