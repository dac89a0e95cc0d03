"""Web commands: user, assign, serve, demo (thin over workbench.services and workbench.web)."""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from workbench import permissions, routing
from workbench.cli.common import (
    campaign_option,
    choice_option,
    fail,
    get_store,
    split_tags,
    topic_list,
    topics_option,
    transaction,
)
from workbench.services import assignments as assignment_service
from workbench.services import campaigns
from workbench.services import routing as routing_service
from workbench.services import users as user_service
from workbench.services.errors import NotFound

DEFAULT_WORKERS = os.cpu_count() or 1


@click.group()
def user() -> None:
    """Accounts: add users, change roles and passwords, issue API tokens."""


def _checked_hash_method(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    try:
        return user_service.check_hash_method(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


password_hash_option = click.option(
    "--password-hash",
    "hash_method",
    envvar="WORKBENCH_PASSWORD_HASH_METHOD",
    default=user_service.DEFAULT_HASH_METHOD,
    show_default=True,
    callback=_checked_hash_method,
    help="werkzeug's method for the password hash: scrypt[:n:r:p] or "
    "pbkdf2[:digest[:iterations]] (as the web app's PASSWORD_HASH_METHOD setting).",
)


@user.command("add")
@click.argument("name")
@click.option(
    "--role", type=click.Choice(tuple(permissions.ROLES)), default="assessor", show_default=True
)
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@click.option(
    "--token",
    is_flag=True,
    help="Also create an API token and print it (once). Without --password-stdin no password "
    "is asked for: a script account that cannot log in in a browser.",
)
@password_hash_option
@click.pass_context
def user_add(
    ctx: click.Context, name: str, role: str, password_stdin: bool, token: bool, hash_method: str
) -> None:
    """Add a user NAME (the password is asked for, or read from stdin; with --token alone, a
    script account without a password)."""
    password = None if token and not password_stdin else _read_password(password_stdin)
    with transaction(ctx) as session:
        created = user_service.create_user(
            session, name, password, role=role, hash_method=hash_method
        )
        secret = user_service.new_api_token(session, created) if token else None
    click.echo(f"added {role} {name}")
    if secret:
        click.echo(f"API token (shown once): {secret}")


@user.command("list")
@click.pass_context
def user_list(ctx: click.Context) -> None:
    """List users with their role and status."""
    with transaction(ctx, read=True) as session:
        for row in user_service.accounts(session):
            status = "active" if row.active else "deactivated"
            click.echo(f"{row.username}\t{row.role}\t{status}")


@user.command("password")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@password_hash_option
@click.pass_context
def user_password(ctx: click.Context, name: str, password_stdin: bool, hash_method: str) -> None:
    """Set the password of user NAME."""
    password = _read_password(password_stdin)
    with transaction(ctx) as session:
        user = user_service.get_user(session, name)
        user_service.set_password(session, user, password, hash_method=hash_method)
    click.echo(f"password of {name} changed")


@user.command("role")
@click.argument("name")
@click.argument("role", type=click.Choice(tuple(permissions.ROLES)))
@click.pass_context
def user_role(ctx: click.Context, name: str, role: str) -> None:
    """Give user NAME the role ROLE."""
    with transaction(ctx) as session:
        user_service.set_role(session, user_service.get_user(session, name), role)
    click.echo(f"{name} is now {role}")


@user.command("activate")
@click.argument("name")
@click.pass_context
def user_activate(ctx: click.Context, name: str) -> None:
    """Let user NAME log in again."""
    _set_active(ctx, name, True)
    click.echo(f"{name} is active")


@user.command("deactivate")
@click.argument("name")
@click.pass_context
def user_deactivate(ctx: click.Context, name: str) -> None:
    """Stop user NAME from logging in (ends their sessions; judgements stay). The last active
    admin cannot be deactivated."""
    _set_active(ctx, name, False)
    click.echo(f"{name} is deactivated")


def _set_active(ctx: click.Context, name: str, active: bool) -> None:
    with transaction(ctx) as session:
        user_service.set_active(session, user_service.get_user(session, name), active)


@user.command("token")
@click.argument("name")
@click.pass_context
def user_token(ctx: click.Context, name: str) -> None:
    """Issue a new API token for user NAME (replaces the old one at once; printed once)."""
    with transaction(ctx) as session:
        secret = user_service.new_api_token(session, user_service.get_user(session, name))
    click.echo(secret)


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=True)


def policy_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--policy and one option per policy parameter, generated from the registry
    (`routing.POLICIES`, `routing.option_fields()`)."""
    for f in reversed(routing.option_fields()):
        kind = (
            click.IntRange(min=f.minimum)
            if f.kind is int
            else click.FloatRange(min=f.minimum, max=f.maximum)
        )
        help_text = (
            f"{f.help[0].upper()}{f.help[1:]} ({', '.join(f.policies)}) [default: {f.default}]."
        )
        name = "--" + f.name.replace("_", "-")
        command = click.option(name, f.name, type=kind, default=None, help=help_text)(command)
    return choice_option(
        "--policy",
        choices=routing.POLICIES,
        default=routing.DEFAULT_POLICY,
        help="; ".join(f"{p.name}: {p.help}" for p in routing.POLICIES.values()) + ".",
    )(command)


@click.command()
@campaign_option
@click.option("--assessors", help="Comma-separated usernames (default: every assessor).")
@click.option("--pool", "pool_number", type=int, default=None,
              help="The pool's number in the campaign (default: the newest pool with "
              "assignments, else the newest pool).")  # fmt: skip
@click.option(
    "--order",
    type=click.Choice(assignment_service.ORDERS),
    default="random",
    show_default=True,
    help="Presentation order of each assessor's documents.",
)
@topics_option
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the policy's samples and chunks (default: the pool's).",
)
@policy_options
@click.pass_context
def assign(
    ctx: click.Context,
    campaign_name: str,
    assessors: str | None,
    pool_number: int | None,
    order: str,
    topics: str | None,
    seed: int | None,
    policy: str,
    **parameters: Any,
) -> None:
    """Assign a pool by a policy (default: every topic to J judges), balancing documents per
    assessor; the pool records the policy."""
    with transaction(ctx) as session:
        result = routing_service.route_pool(
            session,
            campaigns.get_campaign(session, campaign_name),
            pool_number,
            policy,
            parameters,
            assessor_names=split_tags(assessors),
            order=order,
            topics=topic_list(topics),
            seed=seed,
        )
    click.echo(
        f"{result.assignments} new assignments in pool {result.pool.number} ({result.described})"
    )
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    for name, documents in result.load.items():
        click.echo(f"{name}\t{documents} documents")


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LOG_DATE_FORMAT = "%Y-%m-%d %H:%M:%S%z"  # local time with its offset from UTC


def log_config() -> dict[str, Any]:
    """Granian's logging configuration (merged into its own) with a timestamp and time zone
    on every line, the app's own loggers (root) included."""
    formatter = {"()": "logging.Formatter", "fmt": LOG_FORMAT, "datefmt": LOG_DATE_FORMAT}
    return {
        "formatters": {"generic": formatter, "access": {**formatter, "fmt": "%(message)s"}},
        "root": {"handlers": ["console"], "level": "INFO"},
    }


def first_admin_hint(ctx: click.Context) -> None:
    """While the store has no active admin, say the command that makes the first one (with
    the --db given on the command line: the same store; its password hidden)."""
    from workbench.services.store_handle import shown_url

    with transaction(ctx, read=True) as session:
        if user_service.has_active_admin(session):
            return
    root = ctx.find_root()
    command = user_service.FIRST_ADMIN_COMMAND
    if root.get_parameter_source("database_url") == click.core.ParameterSource.COMMANDLINE:
        command = command.replace("workbench ", f"workbench --db {shown_url(get_store(ctx))} ", 1)
    click.echo(
        "No admin account exists yet. Create the first one in another terminal, in this "
        f"folder (it asks for a password), then log in:\n    {command}"
    )


def run_server(ctx: click.Context, host: str, port: int, workers: int, threads: int) -> None:
    """Serve `workbench.web.wsgi:app` with granian: `workers` processes of `threads` threads.

    The store is migrated and the secret key written (when not in the environment) here,
    once, before the workers start; every worker then builds the app from the environment.
    This process must not import `workbench.web.wsgi`: forked workers would inherit its app.
    """
    from granian import Granian
    from granian.constants import Interfaces

    from workbench.services.store_handle import ENV_VAR
    from workbench.web import INSTANCE_ENV, secret_key

    refuse_port_in_use(host, port)
    instance = Path.cwd() / "instance"
    os.environ[ENV_VAR] = get_store(ctx).url
    os.environ[INSTANCE_ENV] = str(instance)
    secret_key(str(instance))
    first_admin_hint(ctx)
    click.echo(f"Serving on http://{host}:{port}/  (Ctrl+C to stop)")
    Granian(
        "workbench.web.wsgi:app",
        address=host,
        port=port,
        interface=Interfaces.WSGI,
        workers=workers,
        blocking_threads=threads,
        respawn_failed_workers=True,
        log_access=False,
        log_dictconfig=log_config(),
        websockets=False,
    ).serve()


def refuse_port_in_use(host: str, port: int) -> None:
    """Exit with a clear message when something already listens on host:port.

    granian binds with SO_REUSEPORT, so a second server on the same port would start and share
    the traffic; a plain bind (without SO_REUSEPORT) fails while any socket listens there."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        fail(f"cannot serve on {host}:{port}: {error.strerror}")
        return
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                fail(f"port {port} on {host} is already in use (another server?); choose --port")
            fail(f"cannot serve on {host}:{port}: {error.strerror}")


def server_options(command: Callable[..., None]) -> Callable[..., None]:
    """--host, --port, --workers and --threads of the commands that serve the app."""
    options = [
        click.option("--host", default="127.0.0.1", show_default=True),
        click.option("--port", default=5000, show_default=True, type=int),
        click.option(
            "--workers",
            default=DEFAULT_WORKERS,
            show_default=True,
            type=click.IntRange(min=1),
            help="Server processes (default: one per CPU core).",
        ),
        click.option(
            "--threads",
            default=2,
            show_default=True,
            type=click.IntRange(min=1),
            help="Request threads per process.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command()
@server_options
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, workers: int, threads: int) -> None:
    """Run the web app (SQLite in ./instance unless --db is given)."""
    run_server(ctx, host, port, workers, threads)


@click.command()
@server_options
@click.option("--no-serve", is_flag=True, help="Create the demo data and exit.")
@password_hash_option
@click.pass_context
def demo(
    ctx: click.Context,
    host: str,
    port: int,
    workers: int,
    threads: int,
    no_serve: bool,
    hash_method: str,
) -> None:
    """Create the demo campaign (once), print the logins and serve it (--no-serve: exit)."""
    from workbench import demo as demo_data

    store = get_store(ctx)
    try:
        created = demo_data.create_demo(store, hash_method)
    except NotFound as error:
        fail(str(error))
    click.echo("Demo campaign " + ("created." if created else "already exists."))
    if no_serve:
        click.echo("Serve it with `workbench serve`, open the address it prints and log in as:")
    else:
        click.echo(f"Open http://{host}:{port}/ and log in as:")
    for name, password, role in demo_data.logins():
        click.echo(f"  {name:<8} password {password:<12} ({role})")
    if not no_serve:
        run_server(ctx, host, port, workers, threads)
