"""``tarocchi-rl serve``: the browser game and the HTTP API (the ``web`` extra: Starlette, uvicorn).

:mod:`~tarocchi_rl.web.table` (a deal against bots and what a seat may see of it: pure Python),
:mod:`~tarocchi_rl.web.bots` (the bots a server offers, by name), :mod:`~tarocchi_rl.web.app` (the Starlette
app: the page, the ``/ws`` tables, ``/v1/...``), :mod:`~tarocchi_rl.web.openapi`, :mod:`~tarocchi_rl.web.serve`
(uvicorn), ``static/`` (the page: HTML, CSS, JavaScript, no build step).
"""
