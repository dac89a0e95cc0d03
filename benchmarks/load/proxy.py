"""nginx in front of several `workbench serve` instances, on deploy/nginx.conf (the
two-app-server test and the crowd benchmark start it; Debian's nginx package)."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


class Nginx:
    """nginx (`nginx -p PREFIX -c CONF`, not as a daemon) on deploy/nginx.conf, its listen
    address and upstream ports rewritten."""

    def __init__(
        self, folder: Path, port: int, upstream: list[int], *, connections: int = 256
    ) -> None:
        self.folder, self.port = folder, port
        site = (REPO / "deploy" / "nginx.conf").read_text()
        site = re.sub(r"listen 80;", f"listen {HOST}:{port};", site)
        servers = "".join(f"    server {HOST}:{p};\n" for p in upstream)
        site, replaced = re.subn(r"(    server 127\.0\.0\.1:\d+;\n)+", servers, site)
        assert replaced == 1, "deploy/nginx.conf: the upstream servers were not found"
        for sub in ("logs", "temp"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        (folder / "site.conf").write_text(site)
        temp = folder / "temp"
        user = "user root;\n" if os.geteuid() == 0 else ""  # workers may write the temp folders
        (folder / "nginx.conf").write_text(
            f"{user}worker_processes 1;\nworker_rlimit_nofile {4 * connections};\n"
            f"pid {folder / 'nginx.pid'};\n"
            f"error_log {folder / 'logs' / 'error.log'} warn;\n"
            f"events {{ worker_connections {connections}; }}\n"
            "http {\n"
            f"  access_log {folder / 'logs' / 'access.log'};\n"
            f"  client_body_temp_path {temp / 'body'};\n  proxy_temp_path {temp / 'proxy'};\n"
            f"  fastcgi_temp_path {temp / 'fastcgi'};\n  uwsgi_temp_path {temp / 'uwsgi'};\n"
            f"  scgi_temp_path {temp / 'scgi'};\n"
            f"  include {folder / 'site.conf'};\n"
            "}\n"
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Nginx:
        command = [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf")]
        check = subprocess.run([*command, "-t"], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        self.process = subprocess.Popen(
            [*command, "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                connection = http.client.HTTPConnection(HOST, self.port, timeout=2)
                connection.request("GET", "/login")
                if connection.getresponse().status == 200:
                    return self
            except OSError:
                pass
            assert self.process.poll() is None, self.process.stderr
            assert time.monotonic() < deadline, "nginx did not answer"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
