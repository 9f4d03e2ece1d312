"""Label and field selectors as the API server parses and applies them."""

from __future__ import annotations

import pytest

from simcluster import errors
from simcluster.apiserver import labelparse
from simcluster.apiserver.selectors import field_value, parse_field_selector, parse_label_selector
from simcluster.placement.resources import Registry

REGISTRY = Registry()
PODS = REGISTRY.get("", "v1", "pods")
EVENTS = REGISTRY.get("", "v1", "events")
CONFIGMAPS = REGISTRY.get("", "v1", "configmaps")


def obj(**labels: str) -> dict:
    return {"metadata": {"name": "x", "namespace": "ns", "labels": labels}}


@pytest.mark.parametrize("selector,labels,matches", [
    ("", {}, True),
    ("app=web", {"app": "web"}, True),
    ("app=web", {"app": "db"}, False),
    ("app==web", {"app": "web"}, True),
    ("app!=web", {"app": "db"}, True),
    ("app!=web", {}, True),  # absent keys are "not equal"
    ("app in (web, db)", {"app": "db"}, True),
    ("app in (web,db)", {}, False),
    ("app notin (web)", {}, True),
    ("app notin (web)", {"app": "web"}, False),
    ("tier", {"tier": ""}, True),
    ("!tier", {"tier": "x"}, False),
    ("!tier", {"app": "x"}, True),
    ("app=web,tier", {"app": "web"}, False),
    ("app=web,tier", {"app": "web", "tier": "front"}, True),
    ("  app = web  ,  !tier ", {"app": "web"}, True),
    ("x in (foo,,baz)", {"x": ""}, True),  # an empty value in a set
    ("z notin ()", {"z": "a"}, True),
    ("app=", {"app": ""}, True),
    ("example.com/team=nlp", {"example.com/team": "nlp"}, True),
    ("gpus>4", {"gpus": "8"}, True),
    ("gpus<4", {"gpus": "8"}, False),
    ("gpus>4", {"gpus": "many"}, False),
    ("in in (in)", {"in": "in"}, True),  # keywords are values where values go
])
def test_label_selector_semantics(selector, labels, matches):
    assert parse_label_selector(selector)(obj(**labels)) is matches


def test_requirements_are_sorted_by_key_like_apimachinery():
    reqs = labelparse.parse("b=1,a in (y,x),!c")
    assert [(r.key, r.op, r.values) for r in reqs] == [
        ("a", "in", ("x", "y")), ("b", "=", ("1",)), ("c", "!", ())]


@pytest.mark.parametrize("selector,message", [
    ("a in b", "unable to parse requirement: found 'b' expected: '('"),
    ("a in (x", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("a in (x y)", "unable to parse requirement: found 'y', expected: ',' or ')'"),
    ("a in ()x", "found 'x', expected: ',' or 'end of string'"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    (",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("a,", "found '', expected: identifier after ','"),
    ("=a", "found '=', expected: !, identifier, or 'end of string'"),
    ("a===b", "unable to parse requirement: found '=', expected: identifier"),
    ("a b", "unable to parse requirement: found 'b', expected: '=', '!=', '==', 'in', notin'"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
    ("a>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' "
            "operators, the value must be an integer"),
])
def test_label_selector_parse_errors_read_like_apimachinery(selector, message):
    with pytest.raises(errors.ApiError) as e:
        parse_label_selector(selector)
    assert e.value.code == 400 and e.value.reason == "BadRequest"
    assert e.value.message == message


def test_invalid_keys_and_values_are_refused_with_validation_messages():
    with pytest.raises(errors.ApiError) as e:
        parse_label_selector("bad_key_=x")
    assert e.value.message.startswith('unable to parse requirement: <nil>: Invalid value: '
                                      '"bad_key_": name part must consist of alphanumeric')
    with pytest.raises(errors.ApiError) as e:
        parse_label_selector("app=-web")
    assert e.value.message.startswith('unable to parse requirement: values[0][app]: Invalid '
                                      'value: "-web": a valid label must be an empty string')
    with pytest.raises(errors.ApiError) as e:
        parse_label_selector("app=" + "x" * 64)
    assert "must be no more than 63 characters" in e.value.message
    with pytest.raises(errors.ApiError) as e:
        parse_label_selector("a/b/c")
    assert "a qualified name must consist of" in e.value.message
    with pytest.raises(errors.ApiError) as e:
        parse_label_selector("Example.com/x")
    assert "prefix part a lowercase RFC 1123 subdomain" in e.value.message


def test_objects_with_odd_labels_never_break_a_selector():
    match = parse_label_selector("app=web")
    assert match({"metadata": {"labels": None}}) is False
    assert match({"metadata": {}}) is False
    assert parse_label_selector("!app")({"metadata": {"labels": ["app"]}}) is True


# -- field selectors --------------------------------------------------------------------------
POD = {"metadata": {"name": "p", "namespace": "ns"},
       "spec": {"nodeName": "worker-0", "restartPolicy": "Never", "hostNetwork": False},
       "status": {"phase": "Running"}}


@pytest.mark.parametrize("selector,matches", [
    ("status.phase=Running", True),
    ("status.phase==Running", True),
    ("status.phase!=Running", False),
    ("spec.nodeName=worker-0,metadata.name=p", True),
    ("spec.nodeName=", False),
    ("metadata.namespace=ns", True),
    ("spec.hostNetwork=false", True),
    ("status.phase=Running,", True),
])
def test_pod_field_selectors(selector, matches):
    assert parse_field_selector(selector, PODS)(POD) is matches


def test_unscheduled_pods_match_an_empty_node_name():
    pending = {"metadata": {"name": "q", "namespace": "ns"}, "spec": {},
               "status": {"phase": "Pending"}}
    assert parse_field_selector("spec.nodeName=", PODS)(pending)
    assert not parse_field_selector("spec.nodeName!=", PODS)(pending)


def test_event_field_selectors():
    event = {"metadata": {"name": "e", "namespace": "ns"}, "type": "Warning",
             "reason": "FailedScheduling", "source": {"component": "default-scheduler"},
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "uid": "u1"}}
    assert parse_field_selector("involvedObject.name=p,involvedObject.kind=Pod", EVENTS)(event)
    assert parse_field_selector("involvedObject.uid=u1,type=Warning", EVENTS)(event)
    assert parse_field_selector("reason=FailedScheduling", EVENTS)(event)
    assert parse_field_selector("source=default-scheduler", EVENTS)(event)
    assert not parse_field_selector("involvedObject.name=q", EVENTS)(event)
    assert field_value(event, "involvedObject.fieldPath") == ""


@pytest.mark.parametrize("selector,rt,message", [
    ("status.phase", PODS, "invalid selector: 'status.phase'; can't understand 'status.phase'"),
    ("data.a=1", CONFIGMAPS, "field label not supported: data.a"),
    ("status.phase=Running", CONFIGMAPS, "field label not supported: status.phase"),
    ("spec.containers=x", PODS, "field label not supported: spec.containers"),
])
def test_field_selector_errors(selector, rt, message):
    with pytest.raises(errors.ApiError) as e:
        parse_field_selector(selector, rt)
    assert e.value.code == 400 and e.value.message == message
