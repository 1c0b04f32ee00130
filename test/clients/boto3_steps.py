#!/usr/bin/python3
"""Drives a Ferry CLC with boto3 as an administrator would: default settings, one EC2 client.

Usage: /usr/bin/python3 boto3_steps.py ENDPOINT_URL < steps.json

Credentials and region come from the environment only (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_DEFAULT_REGION), as after sourcing the CLC's admin.credentials. Nothing is configured on the
client but endpoint_url: botocore's own retries, signing, idempotency tokens, paginators and
waiters do the work. The one addition is observation: a before-send and a response-received
handler record every HTTP attempt (its Authorization header and what came back); they return
None, so botocore sends and retries exactly as it would without them.

stdin is a JSON list of steps, stdout one JSON list with a result per step:
  {"call": OP, "args": {...}}                         -> {"response": {...}} | {"error": {...}}
  {"paginate": OP, "args": {...}, "config": {...}}    -> {"pages": [...]} | {"error": {...}}
  {"wait": WAITER, "args": {...}, "config": {...}}    -> {"waited": true} | {"waiterError": ...}
  {"resource": ACTION, "args": {...}}                 -> {"resources": ...}  boto3.resource('ec2')'s action
  {"resource": ACTION, "on": [TYPE, ID], "args": {}}  -> {"resources": ...}  e.g. Instance(ID).create_tags
  {"attribute": NAME, "on": [TYPE, ID]}               -> {"value": ...}      e.g. Instance(ID).tags, loaded
A resource in a result is given as its identifiers ({"id": ...}; a Tag: resource_id, key, value).
Each result also has "attempts": [{"status", "code", "authorization", "amzDate", "clientToken"}]
and "seconds". The resource interface gets its client from the same defaults (only endpoint_url),
observed the same way.
"""
import json
import sys
import time
import urllib.parse

import boto3
import botocore.exceptions


def error_of(exc):
    """What botocore made of an error answer: the parsed code and message and the HTTP status."""
    resp = getattr(exc, 'response', None) or {}
    err = resp.get('Error') or {}
    meta = resp.get('ResponseMetadata') or {}
    return {
        'type': type(exc).__name__,
        'code': err.get('Code'),
        'message': err.get('Message'),
        'status': meta.get('HTTPStatusCode'),
        'retryAttempts': meta.get('RetryAttempts'),
        'text': str(exc),
    }


def plain(value):
    """A resource object as its identifiers; lists element by element; anything else as it is."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    meta = getattr(value, 'meta', None)
    if meta is not None and hasattr(meta, 'identifiers'):
        return {name: getattr(value, name) for name in meta.identifiers}
    return value


def resource_target(resources, step):
    if 'on' not in step:
        return resources()
    kind, ident = step['on']
    return getattr(resources(), kind)(ident)


def run_step(client, resources, step, attempts):
    if 'resource' in step:
        return {'resources': plain(getattr(resource_target(resources, step), step['resource'])(**step.get('args', {})))}
    if 'attribute' in step:
        target = resource_target(resources, step)
        target.load()
        return {'value': plain(getattr(target, step['attribute']))}
    if 'call' in step:
        response = getattr(client, step['call'])(**step.get('args', {}))
        return {'response': response}
    if 'paginate' in step:
        paginator = client.get_paginator(step['paginate'])
        pages = paginator.paginate(PaginationConfig=step.get('config', {}), **step.get('args', {}))
        return {'pages': list(pages)}
    if 'wait' in step:
        waiter = client.get_waiter(step['wait'])
        try:
            waiter.wait(WaiterConfig=step.get('config', {}), **step.get('args', {}))
        except botocore.exceptions.WaiterError as exc:
            return {'waiterError': {'reason': exc.kwargs.get('reason'), 'lastResponse': exc.last_response}}
        return {'waited': True}
    raise ValueError('unknown step: %r' % (step,))


def main():
    endpoint = sys.argv[1]
    steps = json.load(sys.stdin)
    client = boto3.client('ec2', endpoint_url=endpoint)
    attempts = []

    def before_send(request, **_):
        auth = request.headers.get('Authorization', b'')
        amz_date = request.headers.get('X-Amz-Date', b'')
        body = request.body or b''
        form = urllib.parse.parse_qs(body.decode() if isinstance(body, bytes) else body)
        attempts.append({
            'authorization': auth.decode() if isinstance(auth, bytes) else auth,
            'amzDate': amz_date.decode() if isinstance(amz_date, bytes) else amz_date,
            'clientToken': (form.get('ClientToken') or [None])[0],
        })

    def response_received(response_dict=None, parsed_response=None, exception=None, **_):
        if not attempts:
            return
        if response_dict is not None:
            attempts[-1]['status'] = response_dict.get('status_code')
            attempts[-1]['code'] = ((parsed_response or {}).get('Error') or {}).get('Code')
        else:
            attempts[-1]['status'] = None
            attempts[-1]['code'] = type(exception).__name__

    def observe(c):
        c.meta.events.register('before-send.ec2', before_send)
        c.meta.events.register('response-received.ec2', response_received)

    observe(client)
    resource = []

    def resources():
        if not resource:
            resource.append(boto3.resource('ec2', endpoint_url=endpoint))
            observe(resource[0].meta.client)
        return resource[0]

    results = []
    for step in steps:
        attempts.clear()
        started = time.monotonic()
        try:
            result = run_step(client, resources, step, attempts)
        except botocore.exceptions.ClientError as exc:
            result = {'error': error_of(exc)}
        except Exception as exc:  # what botocore raised instead of an EC2 error (unparsable answer, ...)
            result = {'error': {'type': type(exc).__name__, 'code': None, 'text': str(exc)}}
        result['attempts'] = list(attempts)
        result['seconds'] = round(time.monotonic() - started, 3)
        results.append(result)
    json.dump(results, sys.stdout, default=str)


if __name__ == '__main__':
    main()
