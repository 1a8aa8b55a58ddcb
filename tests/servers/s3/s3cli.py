#!/usr/bin/python3
"""A small S3 client for test set-up, with its own SigV4 signer (independent of src/io/s3).

Credentials and endpoint come from the environment (S3_ENDPOINT, S3_REGION, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY), or from the file that `--env FILE` names (DIR/s3.env of start.sh, whose
values win); path-style addressing.

  s3cli.py mb BUCKET                     create a bucket (200, or 409 when it exists)
  s3cli.py put BUCKET KEY FILE           upload one file
  s3cli.py putdir BUCKET PREFIX DIR      upload every file under DIR as PREFIX/relative/path
  s3cli.py get BUCKET KEY [RANGE]        print an object (or a Range: bytes=... of it)
  s3cli.py req METHOD PATH [QUERY]       print status, headers and body of any request
Exit status 0 on a 2xx answer, 1 otherwise (the answer is printed to stderr).
"""
import concurrent.futures
import datetime
import hashlib
import hmac
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

UNRESERVED = "-_.~"
# The test server is on 127.0.0.1: never through an http_proxy the environment may name.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def quote(text, safe=""):
    return urllib.parse.quote(text, safe=UNRESERVED + safe)


def sign(method, path, query, headers, payload_hash, env, now=None):
    """Adds Authorization to `headers` (which holds host and any other headers to sign)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    region = env.get("S3_REGION", "us-east-1")
    headers["x-amz-date"] = amz_date
    headers["x-amz-content-sha256"] = payload_hash
    names = sorted(h.lower() for h in headers)
    lower = {k.lower(): " ".join(str(v).split()) for k, v in headers.items()}
    canonical_query = "&".join(
        f"{quote(k)}={quote(v)}" for k, v in sorted(query))
    canonical = "\n".join([
        method, quote(path, "/"), canonical_query,
        "".join(f"{n}:{lower[n]}\n" for n in names), ";".join(names), payload_hash])
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + env["AWS_SECRET_ACCESS_KEY"]).encode()
    for part in (day, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={env['AWS_ACCESS_KEY_ID']}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}")


def request(method, path, query=(), body=b"", extra=None, env=os.environ):
    endpoint = urllib.parse.urlsplit(env["S3_ENDPOINT"])
    headers = {"host": endpoint.netloc}
    headers.update(extra or {})
    sign(method, path, list(query), headers, hashlib.sha256(body).hexdigest(), env)
    url = f"{env['S3_ENDPOINT']}{quote(path, '/')}"
    if query:
        url += "?" + "&".join(f"{quote(k)}={quote(v)}" for k, v in query)
    req = urllib.request.Request(url, data=body if method == "PUT" else None, method=method,
                                 headers={k: v for k, v in headers.items() if k != "host"})
    try:
        with OPENER.open(req, timeout=60) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


class Failed(Exception):
    pass


def check(status, headers, body, ok=(200, 204)):
    if status not in ok:
        raise Failed(f"HTTP {status}\n{headers}\n{body.decode(errors='replace')}")


def put_file(bucket, key, path):
    with open(path, "rb") as f:
        data = f.read()
    check(*request("PUT", f"/{bucket}/{key}", body=data))


def main(argv):
    if len(argv) > 2 and argv[1] == "--env":
        with open(argv[2]) as f:
            os.environ.update(line.strip().split("=", 1) for line in f if "=" in line)
        argv = argv[:1] + argv[3:]
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "mb" and len(args) == 1:
        check(*request("PUT", f"/{args[0]}"), ok=(200, 409))
    elif cmd == "put" and len(args) == 3:
        put_file(*args)
    elif cmd == "putdir" and len(args) == 3:
        bucket, prefix, top = args
        jobs = []
        for dirpath, _, files in os.walk(top):
            for name in files:
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, top).replace(os.sep, "/")
                jobs.append((bucket, f"{prefix}/{rel}" if prefix else rel, path))
        # Why 8 at once: one PUT to the one-process Swift takes ~15 ms, mostly waiting; 8 in
        # flight upload the 390 files of the S3 tests' corpus in ~2 s instead of ~8 s.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            for future in [pool.submit(put_file, *job) for job in jobs]:
                future.result()
    elif cmd == "get" and len(args) in (2, 3):
        extra = {"range": args[2]} if len(args) == 3 else None
        status, headers, body = request("GET", f"/{args[0]}/{args[1]}", extra=extra)
        check(status, headers, body, ok=(200, 206))
        sys.stdout.buffer.write(body)
    elif cmd == "req" and len(args) in (2, 3):
        query = urllib.parse.parse_qsl(args[2], keep_blank_values=True) if len(args) == 3 else []
        status, headers, body = request(args[0], args[1], query)
        print(status)
        for k, v in headers.items():
            print(f"{k}: {v}")
        print()
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
        return 0 if 200 <= status < 300 else 1
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Failed as err:
        sys.stderr.write(f"{err}\n")
        sys.exit(1)
