"""The bus options are declared once (:class:`BusOptions`) and every command that joins the bus
takes them through :func:`joins_bus`; the literals that keep ``--help`` cheap equal the values they
stand for."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from jointbus import bus, runtime, stack
from jointbus.cli import demo, foxglove, node, record, topic
from jointbus.cli.errors import CliError
from jointbus.cli.options import (
    BUS_ENVIRONMENT,
    BUS_OPTIONS,
    DEFAULT_HUB_PORT,
    DEFAULT_NAMESPACE,
    BusOptions,
    joins_bus,
)
from jointbus.cli.render import DEFAULT_PRECISION
from jointbus.tools import foxglove_view, recorder


def test_the_spelled_out_defaults_equal_what_they_stand_for() -> None:
    assert DEFAULT_HUB_PORT == bus.DEFAULT_HUB_PORT
    assert DEFAULT_NAMESPACE == runtime.DEFAULT_NAMESPACE
    assert demo.DEFAULT_RATE_HZ == stack.DEFAULT_RATE_HZ
    assert (foxglove.DEFAULT_HOST, foxglove.DEFAULT_PORT) == (
        foxglove_view.DEFAULT_HOST,
        foxglove_view.DEFAULT_PORT,
    )
    assert record.DEFAULT_FLUSH_INTERVAL == recorder.DEFAULT_FLUSH_INTERVAL
    assert topic.DEFAULT_PRECISION == DEFAULT_PRECISION
    assert topic.QOS_PROFILE_NAMES == tuple(bus.PROFILES)
    assert node.LISTEN_S == runtime.DEFAULT_LIVELINESS_TIMEOUT_S


def test_the_shared_options_and_their_variables() -> None:
    assert BUS_OPTIONS == (
        "--hub-port",
        "--connect",
        "--router",
        "--domain-id",
        "--rmw",
        "--listen",
        "--tls-cert",
        "--tls-key",
        "--tls-ca",
        "--access-rules",
    )
    assert BUS_ENVIRONMENT == (
        "JOINTBUS_HUB_PORT",
        "JOINTBUS_CONNECT",
        "JOINTBUS_ROUTER",
        "ROS_DOMAIN_ID",
        "RMW_IMPLEMENTATION",
        None,
        "JOINTBUS_TLS_CERT",
        "JOINTBUS_TLS_KEY",
        "JOINTBUS_TLS_CA",
        "JOINTBUS_ACCESS_RULES",
    )


def _probe() -> tuple[typer.Typer, list[Any]]:
    """A one-command app whose command records what it was given."""
    seen: list[Any] = []
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.command("probe")
    @joins_bus()
    def probe(
        count: Annotated[int, typer.Option("--count")] = 1,
        *,
        bus_options: BusOptions,
    ) -> None:
        """Record the options."""
        seen.append((count, bus_options))

    return app, seen


def test_a_command_receives_one_bus_options_with_what_the_user_gave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app, seen = _probe()
    monkeypatch.setenv("ROS_DOMAIN_ID", "7")
    result = CliRunner().invoke(
        app,
        [
            "--count",
            "3",
            "--hub-port",
            "7500",
            "--connect",
            "tcp/127.0.0.1:1",
            "--connect",
            "tcp/127.0.0.1:2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert seen == [
        (3, BusOptions(7500, ["tcp/127.0.0.1:1", "tcp/127.0.0.1:2"], None, 7, None, None))
    ]


def test_listen_replaces_the_hub_scheme() -> None:
    app, seen = _probe()
    result = CliRunner().invoke(app, ["--listen", "tcp/127.0.0.1:0"])
    assert result.exit_code == 0, result.output
    assert seen[0][1].listen == ["tcp/127.0.0.1:0"]
    assert seen[0][1].zenoh_config().listen == ("tcp/127.0.0.1:0",)


def test_half_given_tls_options_are_an_error_naming_what_is_missing() -> None:
    with pytest.raises(CliError, match="--tls-key and --tls-ca missing"):
        BusOptions(tls_cert="robot.pem", listen=["tls/127.0.0.1:7447"]).zenoh_config()


def test_a_command_without_the_parameter_or_with_a_clash_is_refused_at_once() -> None:
    def no_parameter() -> None:
        """Nothing."""

    with pytest.raises(TypeError, match="bus_options"):
        joins_bus()(no_parameter)

    def clash(router: str = "", *, bus_options: BusOptions) -> None:
        """Its own --router."""

    with pytest.raises(TypeError, match="router"):
        joins_bus()(clash)


@pytest.mark.parametrize(
    ("options", "child"),
    [
        (BusOptions(), BusOptions()),
        (BusOptions(hub_port=7461, domain_id=3), BusOptions(hub_port=7461, domain_id=3)),
        (
            BusOptions(connect=["tcp/10.0.0.2:7447"], router="tcp/10.0.0.1:7447"),
            BusOptions(connect=["tcp/10.0.0.2:7447"], router="tcp/10.0.0.1:7447"),
        ),
        # a process listening on fixed endpoints is joined there; an ephemeral port cannot be
        (
            BusOptions(listen=["tcp/127.0.0.1:7450", "tcp/127.0.0.1:0"], domain_id=0),
            BusOptions(connect=["tcp/127.0.0.1:7450"], domain_id=0),
        ),
        # a TLS-only robot: the child joins it with the same certificates, enforces no rules
        (
            BusOptions(
                listen=["tls/127.0.0.1:7451"],
                tls_cert="c.pem",
                tls_key="k.pem",
                tls_ca="ca.pem",
                access_rules="rules.json5",
            ),
            BusOptions(
                connect=["tls/127.0.0.1:7451"], tls_cert="c.pem", tls_key="k.pem", tls_ca="ca.pem"
            ),
        ),
    ],
)
def test_command_line_makes_a_child_command_join_this_one(
    options: BusOptions, child: BusOptions
) -> None:
    """The demo starts its monitor with these arguments: it must join where the demo joined."""
    app, seen = _probe()
    result = CliRunner().invoke(app, options.command_line(), env={"ROS_DOMAIN_ID": ""})
    assert result.exit_code == 0, result.output
    assert seen[0][1] == child


def test_zenoh_config_follows_the_options() -> None:
    assert BusOptions(hub_port=7461).zenoh_config().hub_port == 7461
    routed = BusOptions(router="tcp/127.0.0.1:7447", connect=["tcp/127.0.0.1:7448"])
    assert routed.zenoh_config().mode == "client"
    assert routed.zenoh_config().connect == ("tcp/127.0.0.1:7448",)
    with pytest.raises(CliError, match="not a Zenoh locator"):
        BusOptions(connect=["127.0.0.1:7447"]).zenoh_config()
