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
_UNITS_QUERY = [
    {"name": "unanswered", "in": "query", "schema": {"type": "boolean"},
     "description": "only units waiting for an outcome"},
    {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0},
     "description": "only units with a higher id (the next page)"},
    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1},
     "description": "at most this many units, lowest ids first"},
    {"name": "format", "in": "query", "schema": {"enum": ["json", "csv"]}}]


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
                  "outcome_window": {"type": "number", "exclusiveMinimum": 0,
                                     "description": "seconds a unit's outcome is awaited "
                                     "(default 86400)"},
                  "missing": {"enum": ["zero", "expire"],
                              "description": "a unit unanswered when its window closes: "
                              "reward 0, or withdrawn (default: zero for rewards in [0, 1])"},
                  "overflow": {"enum": ["design", "uniform", "control", "off"],
                               "description": "units beyond the algorithm's slots "
                               "(docs/service.md)"},
                  "reward_type": {"enum": ["binary", "bounded", "continuous", None],
                                  "description": "the metric, for the verdicts"},
                  "reward_range": {"type": ["array", "null"], "items": {"type": "number"}},
                  "verdicts": {"type": ["object", "null"],
                               "description": "sequence, tune_n, tau, control_share, "
                               "alternative, margin, winsorize, cuped, ratio "
                               "(docs/experiment.md)"}}}
    experiment = {
        f"/experiments/{{name}}/{verb}": {"parameters": [_NAME], "post": spec}
        for verb, spec in {
            "assign": _write(
                "arms for the next n units (beyond the algorithm's slots: overflow or "
                "rollout units, listed in overflow_units)",
                {"type": "object", "required": ["n"],
                 "properties": {"n": {"type": "integer", "minimum": 1},
                                "covariates": {"type": ["array", "null"],
                                               "items": {"type": "number"},
                                               "description": "CUPED: one pre-experiment "
                                               "value per unit"},
                                "segments": {"type": ["array", "null"],
                                             "items": {"type": "string"},
                                             "description": "one declared segment label "
                                             "per unit"}}},
                {"type": "object", "properties": {
                    "units": {"type": "array", "items": unit},
                    "reason": {"type": ["string", "null"]},
                    "overflow_units": _INTS}}),
            "record": _write(
                "record the rewards (and costs) of assigned units: all or nothing",
                {"type": "object", "required": ["units", "rewards"],
                 "properties": {"units": _INTS,
                                "rewards": {"type": "array", "items": {"type": "number"}},
                                "costs": {"type": ["array", "null"]},
                                "metrics": {"type": ["object", "null"],
                                            "description": "guardrail metric → one number "
                                            "per unit"},
                                "covariates": {"type": ["array", "null"],
                                               "items": {"type": "number"},
                                               "description": "CUPED: one pre-experiment "
                                               "value per unit"},
                                "denominators": {"type": ["array", "null"],
                                                 "items": {"type": "number"},
                                                 "description": "ratio metrics: one "
                                                 "denominator per unit"}}},
                {"type": "object", "properties": {"recorded": {"type": "integer"}}}),
            "expire": _write(
                "withdraw unanswered units (their slots are assigned again)",
                {"type": "object", "properties": {"units": _INTS,
                                                  "older_than": {"type": "number"}}},
                {"type": "object", "properties": {"expired": {"type": "integer"}}}),
            "resume": _write(
                "lift a pause (by hand or a guardrail's): assign hands out units again",
                _OBJECT, {"type": "object", "properties": {"resumed": {"type": "integer"}}}),
            "pause": _write(
                "pause by hand: assign hands out nothing until resume",
                {"type": "object", "properties": {"reason": {"type": "string"}}},
                {"type": "object", "properties": {"paused": {"type": "boolean"}}}),
            "stop": _write(
                "conclude: the algorithm stops; later units are rollout units of arm (default: "
                "the recommended or leading arm), or none with rollout false",
                {"type": "object", "properties": {"arm": {"type": "string"},
                                                  "rollout": {"type": "boolean"}}},
                {"type": "object", "properties": {"stopped": _OBJECT}}),
            "correct": _write(
                "record the right reward of units recorded wrong, beside the recorded one "
                "(kept in the audit log; status counts the corrected value)",
                {"type": "object", "required": ["units", "rewards", "reason"],
                 "properties": {"units": _INTS,
                                "rewards": {"type": "array", "items": {"type": "number"}},
                                "reason": {"type": "string"}}},
                {"type": "object", "properties": {"corrected": {"type": "integer"}}}),
            "archive": _write(
                "stop for good without rollout (then it may be deleted)", _OBJECT,
                {"type": "object", "properties": {"archived": {"type": "boolean"}}}),
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
            "/health": {"get": _read("the server is up (liveness; no token)", _OBJECT)},
            "/ready": {"get": _read("the store answers and the writer is not stuck "
                                    "(readiness; no token; 503 otherwise)", _OBJECT)},
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
                                      "content": {"text/html": {}}}, "404": _ERROR}},
                "delete": {"summary": "delete an archived experiment", "security":
                           [{"bearer": []}], "responses": {"200": _json(_OBJECT),
                                                            "400": _ERROR, "401": _ERROR,
                                                            "404": _ERROR}}},
            "/": {"get": {"summary": "the experiments, their state and leader (HTML)",
                          "responses": {"200": {"description": "HTML",
                                                "content": {"text/html": {}}}}}},
            "/docs": {"get": {"summary": "this description as a page that sends calls (HTML)",
                              "responses": {"200": {"description": "HTML",
                                                    "content": {"text/html": {}}}}}},
            "/metrics": {"get": {"summary": "Prometheus metrics (text)",
                                 "responses": {"200": {"description": "text",
                                                       "content": {"text/plain": {}}}}}},
            "/experiments/{name}/audit": {"parameters": [_NAME], "get": _read(
                "every operator action: who, what, when", _OBJECT)},
            "/experiments/{name}/units.csv": {"parameters": [_NAME], "get": {
                "summary": "the units as CSV (?unanswered=true: only those waiting)",
                "responses": {"200": {"description": "CSV", "content": {"text/csv": {}}},
                              "404": _ERROR}}},
            "/experiments/{name}/status.csv": {"parameters": [_NAME], "get": {
                "summary": "the status's per-arm table as CSV",
                "responses": {"200": {"description": "CSV", "content": {"text/csv": {}}},
                              "404": _ERROR}}},
            **experiment,
            "/experiments/{name}/units": {"parameters": [_NAME, *_UNITS_QUERY], "get": {
                **_read("assignments with their rewards and times (JSON, or CSV with "
                        "format=csv or Accept: text/csv; the next page after next_after, or "
                        "the CSV's X-Next-After header)", _OBJECT),
                "responses": {"200": {"description": "OK", "content": {
                    "application/json": {"schema": _OBJECT}, "text/csv": {}}},
                    "400": _ERROR, "404": _ERROR, "503": _ERROR}}},
            "/experiments/{name}/status": {"parameters": [_NAME], "get": _read(
                "ExperimentStatus: every field; arms as a list of records", _OBJECT)},
            # assignment at the edge (routes_edge.py)
            "/experiments/{name}/allocation": {"parameters": [_NAME], "get": {
                **_read("what an application assigns by: arms, weights, salt, version "
                        "(ETag; If-None-Match answers 304)", _OBJECT),
                "responses": {"200": _json(_OBJECT), "304": {"description": "not modified"},
                              "404": _ERROR, "503": _ERROR}}},
            "/experiments/{name}/events": {"parameters": [_NAME], "post": {
                **_write("exposures and outcomes in bulk (JSON, or application/x-ndjson: one "
                         "event a line with \"type\"); idempotent; refusals per event",
                         {"type": "object", "properties": {
                             "exposures": {"type": "array", "items": _OBJECT},
                             "outcomes": {"type": "array", "items": _OBJECT}}}, _OBJECT)}},
        },
    }
