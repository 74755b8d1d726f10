"""The OpenAPI 3.1 description of the service, served at ``GET /openapi.json``: written out
here (the routes take plain JSON checked by the library, so there are no models to derive it
from)."""

from __future__ import annotations

from typing import Any

from ..live.store import NAME_PATTERN

__all__ = ["openapi"]

_ERROR = {"description": "refused: {\"error\": \"<one line>\"}",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _write(summary: str, request: dict[str, Any], response: dict[str, Any],
           ok: str = "200") -> dict[str, Any]:
    return {"summary": summary, "security": [{"bearer": []}],
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": request}}},
            "responses": {ok: _json(response), "400": _ERROR, "401": _ERROR, "404": _ERROR,
                          "413": _ERROR, "503": _ERROR}}


def _read(summary: str, response: dict[str, Any]) -> dict[str, Any]:
    return {"summary": summary, "responses": {"200": _json(response), "404": _ERROR,
                                              "503": _ERROR}}


_NAME = {"name": "name", "in": "path", "required": True,
         "schema": {"type": "string", "pattern": f"^{NAME_PATTERN.pattern}$"}}
_OBJECT = {"type": "object"}
_INTS = {"type": "array", "items": {"type": "integer"}}


def openapi() -> dict[str, Any]:
    from .. import __version__

    unit = {"type": "object", "properties": {"unit": {"type": "integer"},
                                             "arm": {"type": "string"},
                                             "arm_index": {"type": "integer"},
                                             "batch": {"type": "integer"}}}
    create = {"type": "object", "required": ["name", "algorithm", "seed"],
              "properties": {
                  "name": _NAME["schema"],
                  "algorithm": {"type": "string", "description": "a registered algorithm"},
                  "arms": {"type": "array", "description": "arm names (or the names of the "
                           "rows of features)"},
                  "features": {"type": "array", "items": {"type": "array"},
                               "description": "linear algorithms: one row of numbers per arm"},
                  "seed": {"type": "integer", "minimum": 0},
                  "horizon": {"type": ["integer", "null"], "minimum": 1},
                  "params": _OBJECT,
                  "thresholds": {"type": ["array", "null"], "items": {"type": "number"}},
                  "order": {"enum": ["shuffled", "batch"]},
                  "guardrails": {"type": ["array", "null"], "items": _OBJECT,
                                 "description": "metric, rule, margin, range (docs/experiment.md)"},
                  "guardrail_alpha": {"type": "number"},
                  "reward_type": {"enum": ["binary", "bounded", "continuous", None],
                                  "description": "the metric, for the verdicts"},
                  "reward_range": {"type": ["array", "null"], "items": {"type": "number"}},
                  "verdicts": {"type": ["object", "null"],
                               "description": "sequence, tune_n, tau, control_share, "
                               "alternative, margin (docs/experiment.md)"}}}
    experiment = {
        f"/experiments/{{name}}/{verb}": {"parameters": [_NAME], "post": spec}
        for verb, spec in {
            "assign": _write(
                "arms for the next n units (fewer when the batch waits for rewards)",
                {"type": "object", "required": ["n"],
                 "properties": {"n": {"type": "integer", "minimum": 1}}},
                {"type": "object", "properties": {
                    "units": {"type": "array", "items": unit},
                    "reason": {"type": ["string", "null"]}}}),
            "record": _write(
                "record the rewards (and costs) of assigned units: all or nothing",
                {"type": "object", "required": ["units", "rewards"],
                 "properties": {"units": _INTS,
                                "rewards": {"type": "array", "items": {"type": "number"}},
                                "costs": {"type": ["array", "null"]},
                                "metrics": {"type": ["object", "null"],
                                            "description": "guardrail metric → one number "
                                            "per unit"}}},
                {"type": "object", "properties": {"recorded": {"type": "integer"}}}),
            "expire": _write(
                "withdraw unanswered units (their slots are assigned again)",
                {"type": "object", "properties": {"units": _INTS,
                                                  "older_than": {"type": "number"}}},
                {"type": "object", "properties": {"expired": {"type": "integer"}}}),
            "resume": _write(
                "lift a guardrail breach's pause: assign hands out units again",
                _OBJECT, {"type": "object", "properties": {"resumed": {"type": "integer"}}}),
        }.items()}
    return {
        "openapi": "3.1.0",
        "info": {"title": "banditkit live experiments", "version": __version__,
                 "description": "A thin HTTP layer over banditkit.Experiment (docs/service.md)."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": {"type": "object", "required": ["error"],
                                  "properties": {"error": {"type": "string"}}}}},
        "paths": {
            "/health": {"get": _read("the server is up", _OBJECT)},
            "/openapi.json": {"get": _read("this description", _OBJECT)},
            "/experiments": {
                "get": _read("the experiments' names", {"type": "object", "properties": {
                    "experiments": {"type": "array", "items": {"type": "string"}}}}),
                "post": {**_write("create an experiment (Experiment.create's fields)", create,
                                  _OBJECT, ok="201"),
                         "responses": {"201": _json(_OBJECT, "created"), "400": _ERROR,
                                       "401": _ERROR, "409": _ERROR, "413": _ERROR,
                                       "503": _ERROR}}},
            "/experiments/{name}": {"parameters": [_NAME], "get": {
                "summary": "a page to watch the experiment (HTML)",
                "responses": {"200": {"description": "HTML",
                                      "content": {"text/html": {}}}, "404": _ERROR}}},
            **experiment,
            "/experiments/{name}/units": {"parameters": [_NAME], "get": _read(
                "every assignment with its reward and times", _OBJECT)},
            "/experiments/{name}/status": {"parameters": [_NAME], "get": _read(
                "ExperimentStatus: every field; arms as a list of records", _OBJECT)},
        },
    }
