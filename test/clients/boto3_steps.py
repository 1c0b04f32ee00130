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
Each result also has "attempts": [{"status", "code", "authorization", "amzDate", "clientToken"}]
and "seconds".
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


def run_step(client, step, attempts):
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

    client.meta.events.register('before-send.ec2', before_send)
    client.meta.events.register('response-received.ec2', response_received)

    results = []
    for step in steps:
        attempts.clear()
        started = time.monotonic()
        try:
            result = run_step(client, step, attempts)
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
