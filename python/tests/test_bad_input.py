"""Bad input raises the registry's typed exceptions, bounded in size, and the
interpreter lives on: wrong types, a 10 MB name, a cycle, deep nesting,
values JSON cannot hold."""

import math
from typing import Any, Callable

import pytest

import agents_registry as ar

TEN_MB = 10 * 1024 * 1024
# What an error may be at the most: messages quote what they were given cut short.
MAX_MESSAGE = 8 * 1024


def raises(cls: type, call: Callable[[], Any]) -> ar.RegistryError:
    with pytest.raises(cls) as caught:
        call()
    err = caught.value
    assert isinstance(err, ar.RegistryError)
    assert len(str(err)) < MAX_MESSAGE, len(str(err))
    return err


@pytest.mark.parametrize(
    "call",
    [
        lambda svc: svc.add_skill(42),
        lambda svc: svc.add_skill("local/x"),
        lambda svc: svc.add_skill(["local/x"]),
        lambda svc: svc.add_skills({"name": "local/x"}),
        lambda svc: svc.add_skills(7),
        lambda svc: svc.add_skills([{"name": "local/x"}, 3]),
        lambda svc: svc.add_skills_yaml(b"name: local/x"),
        lambda svc: svc.get_skill(5),
        lambda svc: svc.get_skill(None),
        lambda svc: svc.list_skills(namespace=3),
        lambda svc: svc.update_skill(3.5),
        lambda svc: svc.remove_skill("local/x", force="yes"),
        lambda svc: svc.tools(["local/x"]),
        lambda svc: svc.resolve_tools(b"local/x"),
        lambda svc: svc.compute_capability_summary("local/x", entries=5),
        lambda svc: svc.compute_capability_summary("local/x", entries=[1]),
        lambda svc: svc.validate_plan(5),
        lambda svc: svc.validate_plan(["local/x", 5]),
        lambda svc: svc.discover_and_register(paths=5),
        lambda svc: svc.refresh_agent_skills(paths=[1]),
        lambda svc: svc.add_skill({"name": "local/x", 1: "key"}),
        lambda svc: svc.add_skill({"name": "local/x", "metadata": {"when": object()}}),
        lambda svc: svc.add_skill({"name": "local/x", "metadata": {"set": {1, 2}}}),
        lambda svc: ar.SkillRepository(5),
        lambda svc: ar.SkillRegistryService(skill_repo="sqlite://x.db"),
        lambda svc: ar.SkillRegistryService(tool_registry=[]),
        lambda svc: ar.ToolRegistry(builtins="no"),
    ],
)
def test_a_wrong_type_is_an_argument_type_error(svc: ar.SkillRegistryService, call: Any) -> None:
    err = raises(ar.ArgumentTypeError, lambda: call(svc))
    assert isinstance(err, TypeError) and isinstance(err, ar.ValidationError)
    assert err.kind == "invalid_argument"
    assert "expected" in str(err)


def test_a_value_of_the_wrong_type_in_a_definition_is_the_parsers_error(svc: ar.SkillRegistryService) -> None:
    for definition, words in (({"name": 5}, "invalid skill name `5`"),
                              ({"name": "local/x", "tools": 5}, "expected a sequence")):
        err = raises(ar.ValidationError, lambda: svc.add_skill(definition))
        assert words in str(err) and err.kind == "invalid_definition"
    raises(ar.ValidationError, lambda: ar.Skill(name=5))


def test_the_place_of_a_wrong_value_is_named(svc: ar.SkillRegistryService) -> None:
    err = raises(ar.ArgumentTypeError, lambda: svc.add_skill(
        {"name": "local/x", "inline_tools": [{"input_schema": {"properties": {"p": b"bytes"}}}]}))
    assert "`inline_tools[0].input_schema.properties.p`" in str(err) and "`bytes`" in str(err)


def test_a_ten_megabyte_name_is_refused_briefly(svc: ar.SkillRegistryService) -> None:
    name = "local/" + "a" * TEN_MB
    # One call down each path a name takes (a dict, YAML text, an argument):
    # at 10 MB each costs seconds in a debug build.
    for call in (
        lambda: svc.add_skill({"name": name}),
        lambda: svc.get_skill(name),
        lambda: svc.add_skills_yaml(f"name: {name}\n"),
    ):
        err = raises(ar.ValidationError, call)
        assert err.kind in ("invalid_definition", "invalid_skill_name"), err.kind
    # A plan dict is read as a plan file is, within `limits.plan_max_bytes`.
    err = raises(ar.ValidationError, lambda: svc.validate_plan({"skills": [name]}))
    assert "limits.plan_max_bytes" in str(err)
    # Named in a list, it is one more problem of the plan, not an exception.
    errors = svc.validate_plan([name])
    assert len(errors) == 1 and len(errors[0]) < MAX_MESSAGE
    # A long namespace too.
    raises(ar.ValidationError, lambda: svc.list_skills(namespace="n" * TEN_MB))
    assert svc.list_skills() == []


def test_a_cycle_is_a_cycle_error(svc: ar.SkillRegistryService) -> None:
    # Adding is fine (a skill may be added before what it includes); flattening is not.
    svc.add_skill({"name": "local/a", "includes": ["local/b"]})
    svc.add_skill({"name": "local/b", "includes": ["local/c"]})
    svc.add_skill({"name": "local/c", "includes": ["local/a"]})
    for call in (lambda: svc.tools("local/a"), lambda: svc.resolve_tools("local/b"),
                 lambda: svc.compute_capability_summary("local/c")):
        err = raises(ar.CycleError, call)
        assert err.kind == "cycle"
    err = raises(ar.CycleError, lambda: svc.tools("local/a"))
    assert err.cycle == ["local/a", "local/b", "local/c", "local/a"]
    assert str(err) == "Cycle detected in skill includes: local/a -> local/b -> local/c -> local/a"
    assert svc.validate_plan(["local/a"]) == [
        "Skill 'local/a': Cycle detected in skill includes: local/a -> local/b -> local/c -> local/a"]
    # A skill that includes itself.
    svc.add_skill({"name": "local/self", "includes": ["local/self"]})
    assert raises(ar.CycleError, lambda: svc.tools("local/self")).cycle == ["local/self", "local/self"]


def test_a_long_cycle_is_reported_by_its_ends(svc: ar.SkillRegistryService) -> None:
    count = 2000
    svc.add_skills([{"name": f"local/s{i}", "includes": [f"local/s{(i + 1) % count}"]} for i in range(count)])
    err = raises(ar.CycleError, lambda: svc.tools("local/s0"))
    assert len(err.cycle) <= 11


def test_nesting_deeper_than_any_limit_is_refused_not_a_crash(svc: ar.SkillRegistryService) -> None:
    deep: Any = "leaf"
    for _ in range(200_000):
        deep = {"d": deep}
    err = raises(ar.ValidationError, lambda: svc.add_skill({"name": "local/deep", "metadata": deep}))
    assert "nested deeper than" in str(err)
    listed: Any = []
    for _ in range(200_000):
        listed = [listed]
    raises(ar.ValidationError, lambda: svc.validate_plan({"skills": listed}))
    # Within the parser's hard limit but over the configured `limits.max_depth`:
    # the parser's message, with the setting that raises it.
    medium: Any = "leaf"
    for _ in range(100):
        medium = {"d": medium}
    err = raises(ar.ValidationError, lambda: svc.add_skill({"name": "local/deep", "metadata": medium}))
    assert "limits.max_depth" in str(err)


@pytest.mark.parametrize(
    "value, words",
    [
        (math.nan, "not a number JSON can hold"),
        (math.inf, "not a number JSON can hold"),
        (2**80, "64-bit"),
        ("\ud800", "lone surrogate"),
    ],
)
def test_values_json_cannot_hold_are_refused(svc: ar.SkillRegistryService, value: Any, words: str) -> None:
    err = raises(ar.ValidationError, lambda: svc.add_skill({"name": "local/x", "metadata": {"v": value}}))
    assert words in str(err) and "`metadata.v`" in str(err)


def test_a_definition_over_the_size_limit_names_the_setting(svc: ar.SkillRegistryService) -> None:
    text = "name: local/big\ndescription: " + "x" * (17 * 1024 * 1024) + "\n"
    err = raises(ar.ValidationError, lambda: svc.add_skills_yaml(text))
    assert "limits.definition_max_bytes" in str(err)


def test_bad_names_and_strategies(svc: ar.SkillRegistryService) -> None:
    err = raises(ar.ValidationError, lambda: svc.get_skill("no-slash"))
    assert err.kind == "invalid_skill_name"
    err = raises(ar.ValidationError, lambda: svc.discover_and_register([], on_conflict="maybe"))
    assert "`skip`, `error` or `replace`" in str(err)
    err = raises(ar.ValidationError, lambda: ar.SkillRepository("mysql://x"))
    assert err.kind == "invalid_database_url"
    raises(ar.ValidationError, lambda: svc.add_skill({"name": "local/x", "version": "v" * 51}))
    raises(ar.ValidationError, lambda: svc.add_skill({"name": "local/x", "description": "a\0b"}))


def test_the_interpreter_still_works_after_all_that(svc: ar.SkillRegistryService) -> None:
    for call in (lambda: svc.add_skill(42), lambda: svc.get_skill("x" * TEN_MB)):
        with pytest.raises(ar.RegistryError):
            call()
    svc.add_skill({"name": "local/ok", "tools": ["builtin/grep"]})
    assert svc.tools("local/ok")[1].total_tools == 1
