/// The live view's files, served by fsm-launch itself: no CDN, nothing fetched from elsewhere,
/// so the page works on a host without a network. Plain HTML, CSS and JavaScript, no framework:
/// the state graphs are drawn as SVG by `view.js` from the graph JSON (a layered layout).
package enum ViewAssets {
    /// `GET /`: the page. Its script and style come from this view only.
    package static let page = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Grove live view</title>
    <link rel="stylesheet" href="/view.css">
    </head>
    <body>
    <header>
      <h1>Grove · <span id="topology-name">…</span></h1>
      <span id="who"></span>
      <span id="connection" class="down">connecting</span>
    </header>
    <main>
      <section id="topology-panel">
        <h2>Workers</h2>
        <ul id="workers"></ul>
        <h2>Machines</h2>
        <table id="machines"><thead><tr><th>address</th><th>type</th><th>worker</th><th>state</th><th>rate /s</th></tr></thead><tbody></tbody></table>
        <h2>Keyed instances</h2>
        <input id="keyed-search" type="search" placeholder="search keyed instances, e.g. counter/7">
        <ul id="keyed"></ul>
        <h2>io groups and routes</h2>
        <ul id="io"></ul>
        <ul id="routes"></ul>
      </section>
      <section id="graph-panel">
        <h2>State graph · <span id="graph-title">pick a machine</span></h2>
        <div id="graph"></div>
        <pre id="state-json"></pre>
      </section>
      <section id="activity-panel">
        <h2>io calls in flight</h2>
        <table id="effects"><thead><tr><th>machine</th><th>effect id</th><th>kind</th><th>request</th><th>on</th><th>for</th><th></th></tr></thead><tbody></tbody></table>
        <h2>Send an event</h2>
        <form id="send-form">
          <input id="send-address" placeholder="address, e.g. auth" required>
          <input id="send-event" placeholder='event, e.g. "startLogin" or {"updateEmail":{"_0":"a@b"}}' required>
          <button id="send-button" type="submit">send</button>
        </form>
        <div id="send-result"></div>
        <h2>Rates <span id="rate-total"></span></h2>
        <h2>Metrics</h2>
        <div id="metrics"><p id="metrics-note"></p></div>
        <h2>Recent transitions</h2>
        <ol id="recent"></ol>
      </section>
    </main>
    <script src="/view.js"></script>
    </body>
    </html>
    """#

    /// `GET /view.css`.
    package static let style = #"""
    body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2327; background: #f6f7f7; }
    header { display: flex; gap: 1em; align-items: baseline; padding: .5em 1em; background: #1d3b2a; color: #fff; }
    header h1 { font-size: 1.2em; margin: 0; }
    #connection.up { color: #9fe6a0; } #connection.down { color: #ffb3b3; }
    main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.7fr) minmax(0, 1fr); gap: 1em; padding: 1em; }
    table { font-size: 13px; }
    section { background: #fff; border: 1px solid #dcdcde; border-radius: 6px; padding: .5em 1em; overflow: auto; }
    h2 { font-size: 1em; margin: .8em 0 .3em; }
    table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: 2px 6px; border-bottom: 1px solid #eee; }
    tr.machine { cursor: pointer; } tr.machine.selected, li.selected { background: #e7f5ea; }
    ul, ol { padding-left: 1.2em; margin: .2em 0; } #keyed li { cursor: pointer; }
    .lost { color: #b32d2e; } .registered { color: #1d6b3a; }
    #graph svg { width: 100%; height: auto; }
    .node rect { fill: #fff; stroke: #8c8f94; rx: 6; } .node text { font-size: 12px; text-anchor: middle; dominant-baseline: middle; }
    .node.terminal rect { stroke-width: 3; } .node.initial rect { stroke: #2271b1; }
    .node.current rect { fill: #1d6b3a; stroke: #1d6b3a; } .node.current text { fill: #fff; font-weight: bold; }
    .edge path { fill: none; stroke: #8c8f94; marker-end: url(#arrow); } .edge text { font-size: 10px; fill: #50575e; }
    .edge.timeout path { stroke-dasharray: 4 3; }
    pre { background: #f6f7f7; padding: .5em; white-space: pre-wrap; word-break: break-all; }
    #send-result.error { color: #b32d2e; } #send-result.ok { color: #1d6b3a; }
    input { width: 95%; margin: 2px 0; } button[disabled] { opacity: .5; }
    #metrics { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: .4em; }
    #metrics-note { grid-column: 1 / -1; margin: 0; color: #50575e; }
    .plot { border: 1px solid #eee; border-radius: 4px; padding: 2px 4px; } .plot .label { font-size: 11px; color: #50575e; }
    .plot .value { float: right; font-size: 12px; font-weight: bold; } .plot svg { width: 100%; height: 28px; display: block; }
    .plot polyline { fill: none; stroke: #2271b1; stroke-width: 1.5; }
    """#
}
