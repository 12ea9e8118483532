"""CloudFormation's intrinsic functions, evaluated the way a deploy resolves them, for the
template tests: Parameter values (with their defaults), pseudo parameters, Conditions, and
what a resource's Ref / Fn::GetAtt returns, given by the caller (a stand-in of the caller's
choosing: a placeholder, or the name a local runtime gave it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

NO_VALUE = object()
ACCOUNT = "123456789012"
REGION = "us-east-1"


class Evaluator:
    def __init__(
        self,
        template: dict[str, Any],
        parameters: dict[str, str] | None = None,
        *,
        resource: Callable[[str, str | None], Any] | None = None,
        stack_name: str = "taskgate",
    ) -> None:
        self.template = template
        values = {n: p.get("Default", "") for n, p in template.get("Parameters", {}).items()}
        values.update(parameters or {})
        self.parameters: dict[str, Any] = {}
        for name, value in values.items():
            kind = template["Parameters"][name]["Type"]
            if kind == "CommaDelimitedList" or kind.startswith("List<"):
                items = value if isinstance(value, list) else str(value).split(",")
                self.parameters[name] = [str(v).strip() for v in items]
            else:
                self.parameters[name] = str(value)
        self.pseudo = {
            "AWS::AccountId": ACCOUNT,
            "AWS::Region": REGION,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": stack_name,
            "AWS::StackId": f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{stack_name}/0000",
            "AWS::NoValue": NO_VALUE,
        }
        self.resource = resource or (
            lambda name, attribute: f"<{name}{'.' + attribute if attribute else ''}>"
        )
        self._conditions: dict[str, bool] = {}

    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            self._conditions[name] = bool(self.value(self.template["Conditions"][name]))
        return self._conditions[name]

    def ref(self, name: str) -> Any:
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        return self.resource(name, None)

    def value(self, node: Any) -> Any:
        """``node`` with every intrinsic replaced by what it resolves to."""
        if isinstance(node, list):
            items = [self.value(v) for v in node]
            return [v for v in items if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((fn, args),) = node.items()
            handler = getattr(self, "_" + fn.replace("::", "_"), None)
            if fn == "Ref":
                return self.ref(args)
            if fn == "Condition":
                return self.condition(args)
            if handler is not None:
                return handler(args)
        out = {k: self.value(v) for k, v in node.items()}
        return {k: v for k, v in out.items() if v is not NO_VALUE}

    def _Fn_GetAtt(self, args: Any) -> Any:
        name, attribute = args.split(".", 1) if isinstance(args, str) else args
        return self.resource(name, attribute)

    def _Fn_Sub(self, args: Any) -> str:
        text, variables = (args, {}) if isinstance(args, str) else (args[0], args[1])
        local = {k: self.value(v) for k, v in variables.items()}

        def one(match: re.Match[str]) -> str:
            name = match[1]
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in local:
                return str(local[name])
            if "." in name and name.split(".", 1)[0] not in self.parameters:
                return str(self.resource(*name.split(".", 1)))
            return str(self.ref(name))

        return re.sub(r"\$\{([^}]+)\}", one, text)

    def _Fn_Join(self, args: Any) -> str:
        separator, items = args
        values = self.value(items)
        flat: list[str] = []
        for v in values if isinstance(values, list) else [values]:
            flat.extend(str(x) for x in (v if isinstance(v, list) else [v]))
        return separator.join(flat)

    def _Fn_Split(self, args: Any) -> list[str]:
        separator, text = args
        return str(self.value(text)).split(separator)

    def _Fn_Select(self, args: Any) -> Any:
        index, items = args
        return self.value(items)[int(self.value(index))]

    def _Fn_If(self, args: Any) -> Any:
        name, yes, no = args
        return self.value(yes if self.condition(name) else no)

    def _Fn_Equals(self, args: Any) -> bool:
        left, right = (self.value(a) for a in args)
        return bool(str(left) == str(right))

    def _Fn_Not(self, args: Any) -> bool:
        return not self.value(args[0])

    def _Fn_And(self, args: Any) -> bool:
        return all(self.value(a) for a in args)

    def _Fn_Or(self, args: Any) -> bool:
        return any(self.value(a) for a in args)

    def _Fn_Base64(self, args: Any) -> str:
        import base64

        return base64.b64encode(str(self.value(args)).encode()).decode()
