"""Lumped thermal model of N bodies with over-temperature shutdown and hysteresis.

Where it sits: :mod:`jointbus.drivers.sim`, the lowest module of the simulator; the actuator
model (:mod:`.actuator_model`) keeps two of these per array — one for the motor windings, one for
the drive electronics — because MD-series drives guard each with its own threshold (driver 100 °C,
motor configurable up to 140 °C, both with 20 °C hysteresis; see ``hb50-facts.md``).

Each body is one first-order node: ``C·dT/dt = P − (T − T_ambient)/R`` with heat capacity ``C``
(J/K), thermal resistance to ambient ``R`` (K/W) and dissipated power ``P`` (W). With ``P`` held
over a step the solution is exact, ``T ← T∞ + (T − T∞)·exp(−dt/(R·C))`` with ``T∞ = T_amb + P·R``,
so the update is stable and accurate for any ``dt`` — the caller may update at its monitoring rate
(500 Hz) or jump whole seconds in a test. The shutdown flag sets when ``T ≥ shutdown`` and clears
only when ``T ≤ shutdown − hysteresis``, as a drive does, so an overheated actuator does not
chatter on and off at the threshold.

All state is numpy arrays of length N updated in place (no allocation per update).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from jointbus.messages.errors import LengthMismatchError, LimitError, NonFiniteError

__all__ = ["ThermalModel"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _read_only(array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
    view = array.view()
    view.flags.writeable = False
    return view


class ThermalModel:
    """First-order thermal nodes with hysteretic over-temperature shutdown, vectorised over N.

    Args (each a sequence or array of length N, one entry per body):
        capacity: heat capacity, J/K (> 0).
        resistance: thermal resistance to ambient, K/W (> 0).
        ambient: ambient temperature, °C.
        shutdown: temperature at which the body's protection trips, °C.
        hysteresis: how far below ``shutdown`` the temperature must fall before the protection
            releases, K (> 0, and ``shutdown − hysteresis`` must lie above ``ambient`` or the
            body could never recover).

    The body starts at ambient temperature, not overheated.
    """

    def __init__(
        self,
        *,
        capacity: npt.ArrayLike,
        resistance: npt.ArrayLike,
        ambient: npt.ArrayLike,
        shutdown: npt.ArrayLike,
        hysteresis: npt.ArrayLike,
    ) -> None:
        c = self._column("capacity", capacity, None, positive=True)
        n = int(c.shape[0])
        r = self._column("resistance", resistance, n, positive=True)
        amb = self._column("ambient", ambient, n)
        trip = self._column("shutdown", shutdown, n)
        hyst = self._column("hysteresis", hysteresis, n, positive=True)
        release = trip - hyst
        for i in range(n):
            if not release[i] > amb[i]:
                raise LimitError(
                    "ThermalModel",
                    "hysteresis",
                    float(hyst[i]),
                    f"shutdown − hysteresis ({float(release[i])} °C) above ambient "
                    f"({float(amb[i])} °C), or the body could never recover",
                    index=i,
                )
        self._n = n
        self._resistance = r
        self._ambient = amb
        self._shutdown = trip
        self._release = release
        self._neg_inv_tau = -1.0 / (r * c)  # −1/(R·C), 1/s
        self._temperature = amb.copy()
        self._overheated = np.zeros(n, dtype=np.bool_)
        self._t_inf = np.empty(n)
        self._decay = np.empty(n)
        self._decay_dt = math.nan
        self._above_release = np.empty(n, dtype=np.bool_)
        self._tripped = np.empty(n, dtype=np.bool_)
        self._temperature_view = _read_only(self._temperature)
        self._overheated_view = _read_only(self._overheated)

    @staticmethod
    def _column(
        field: str, values: npt.ArrayLike, n: int | None, *, positive: bool = False
    ) -> FloatArray:
        array = np.array(values, dtype=np.float64, ndmin=1)
        if array.ndim != 1 or (n is not None and array.shape[0] != n):
            raise LengthMismatchError(
                "ThermalModel", field, array.shape, f"one value per body ({n} values)"
            )
        for i, value in enumerate(array):
            if not math.isfinite(value):
                raise NonFiniteError("ThermalModel", field, float(value), "a finite number",
                                     index=i)
            if positive and not value > 0.0:
                raise LimitError("ThermalModel", field, float(value), "> 0", index=i)
        return array

    @property
    def count(self) -> int:
        """Number of bodies N."""
        return self._n

    @property
    def temperature(self) -> FloatArray:
        """Body temperatures, °C (a read-only live view, updated in place)."""
        return self._temperature_view  # type: ignore[return-value]

    @property
    def overheated(self) -> BoolArray:
        """True where the over-temperature protection is tripped (read-only live view)."""
        return self._overheated_view  # type: ignore[return-value]

    def set_temperature(self, values: npt.ArrayLike) -> None:
        """Set body temperatures, °C (e.g. to start a test hot); re-evaluates the shutdown flags.

        A body set at or above its shutdown temperature trips; one set at or below the release
        temperature is released; in between the flag keeps its state, as the hysteresis implies.
        """
        t = self._column("temperature", values, self._n)
        self._temperature[:] = t
        self._update_flags()

    def update(self, power: FloatArray, dt: float) -> None:
        """Advance by ``dt`` seconds with ``power`` (W, length N) dissipated in each body.

        ``power`` is taken as constant over the step (exact solution of the first-order node).
        """
        if dt != self._decay_dt:
            np.multiply(self._neg_inv_tau, dt, out=self._decay)
            np.exp(self._decay, out=self._decay)
            self._decay_dt = dt
        t_inf = self._t_inf
        np.multiply(power, self._resistance, out=t_inf)
        t_inf += self._ambient
        temperature = self._temperature
        temperature -= t_inf
        temperature *= self._decay
        temperature += t_inf
        self._update_flags()

    def _update_flags(self) -> None:
        # overheated ← (T ≥ shutdown) or (overheated and T > shutdown − hysteresis)
        np.greater(self._temperature, self._release, out=self._above_release)
        np.greater_equal(self._temperature, self._shutdown, out=self._tripped)
        np.logical_and(self._overheated, self._above_release, out=self._overheated)
        np.logical_or(self._overheated, self._tripped, out=self._overheated)
