extension ViewAssets {
    /// `GET /view.js`: keeps the page's model from the `/events` stream (a snapshot first, then
    /// one update per change), draws it, and posts the viewer's actions. The graph is laid out in
    /// layers by distance from the initial state, drawn as SVG.
    package static let script = #"""
    "use strict";
    const model = { topology: null, states: {}, effects: {}, recent: [], workers: {}, rates: { total: 0, machines: {} }, you: null,
                   metrics: "off", plots: {} };
    const plotPoints = 60;
    let selected = null;
    const $ = (id) => document.getElementById(id);
    const el = (tag, attrs, text) => {
      const node = document.createElement(tag);
      for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const svg = (tag, attrs, text) => {
      const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
      for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const effectKey = (e) => e.address + "\u0000" + JSON.stringify(e.effect);
    const may = (role, address) => !!model.you && model.you.grants.some((g) => g.roles.includes(role) && covers(g.machines, address));
    function covers(patterns, address) {
      if (patterns.length === 0) return true;
      return patterns.some((p) => new RegExp("^" + p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$").test(address));
    }

    function apply(update) {
      switch (update.type) {
        case "snapshot":
          model.topology = update.topology; model.you = update.you; model.states = {}; model.effects = {};
          for (const s of update.states) model.states[s.address] = s;
          for (const e of update.effects) model.effects[effectKey(e)] = e;
          model.recent = update.recent; model.workers = update.workers; model.metrics = update.metrics;
          if (!selected && model.topology.machines.length > 0) selected = model.topology.machines.find((m) => !m.keyed)?.name || null;
          break;
        case "state": model.states[update.address] = update; break;
        case "transition": model.recent.push(update); if (model.recent.length > 50) model.recent.shift(); break;
        case "effect":
          if (update.phase === "started") model.effects[effectKey(update)] = update; else delete model.effects[effectKey(update)];
          break;
        case "ended":
          for (const [k, e] of Object.entries(model.effects)) if (e.address === update.address) delete model.effects[k];
          if (model.states[update.address]) model.states[update.address].ended = update.reason;
          break;
        case "worker": model.workers[update.worker] = update.phase; break;
        case "rates": model.rates = update; break;
        case "metrics":
          for (const figure of update.series) {
            const plot = model.plots[figure.id] || (model.plots[figure.id] = { label: figure.label, points: [] });
            plot.points.push(figure.value); if (plot.points.length > plotPoints) plot.points.shift();
          }
          break;
        default: break;
      }
    }

    function render() {
      const t = model.topology;
      if (!t) return;
      $("topology-name").textContent = t.name;
      $("who").textContent = model.you ? "as " + model.you.name : "";
      const workers = $("workers"); workers.replaceChildren();
      for (const w of t.workers) for (const name of w.instances) {
        const phase = model.workers[name] || "";
        workers.append(el("li", { class: phase, "data-worker": name }, name + (phase ? " · " + phase : "") + (w.external ? " (external)" : "")));
      }
      const body = $("machines").tBodies[0]; body.replaceChildren();
      for (const m of t.machines.filter((m) => !m.keyed)) {
        const s = model.states[m.name];
        const row = el("tr", { class: "machine" + (selected === m.name ? " selected" : ""), "data-address": m.name });
        row.append(el("td", {}, m.name), el("td", {}, m.type), el("td", {}, m.worker),
                   el("td", { class: "state" }, s ? (s.node ?? "…") + (s.ended ? " (ended)" : "") : ""),
                   el("td", {}, (model.rates.machines[m.name] ?? 0).toFixed(1)));
        row.onclick = () => { selected = m.name; render(); };
        body.append(row);
      }
      const query = $("keyed-search").value.trim();
      const keyedNames = new Set(t.machines.filter((m) => m.keyed).map((m) => m.name));
      const keyed = $("keyed"); keyed.replaceChildren();
      const instances = Object.keys(model.states).filter((a) => a.includes("/") && keyedNames.has(a.split("/")[0]) && a.includes(query)).sort();
      for (const address of instances.slice(0, 200)) {
        const s = model.states[address];
        const item = el("li", { class: selected === address ? "selected" : "", "data-address": address }, address + " · " + (s.node ?? "…"));
        item.onclick = () => { selected = address; render(); };
        keyed.append(item);
      }
      if (instances.length > 200) keyed.append(el("li", {}, (instances.length - 200) + " more: narrow the search"));
      const io = $("io"); io.replaceChildren();
      for (const p of t.io) io.append(el("li", {}, p.request + " → worker " + p.worker));
      const routes = $("routes"); routes.replaceChildren();
      for (const r of t.routes) routes.append(el("li", {}, r.from + (r.when ? " (" + r.when + ")" : "") + " → " + r.to + (r.event ? " " + JSON.stringify(r.event) : "")));
      renderGraph();
      renderEffects();
      renderMetrics();
      const recent = $("recent"); recent.replaceChildren();
      for (const r of model.recent.slice().reverse()) recent.append(el("li", {}, r.address + ": " + (r.from ?? "?") + " → " + (r.to ?? "?")));
      $("rate-total").textContent = "· " + model.rates.total.toFixed(1) + " transitions/s";
      const canSend = model.you && model.you.grants.some((g) => g.roles.includes("send"));
      $("send-button").disabled = !canSend;
      $("send-button").title = canSend ? "" : "this token has no send role";
    }

    // The metrics, one small plot a figure: the last plotPoints readings (a reading without a
    // figure, such as a quantile of no samples, is a gap), scaled to the largest.
    function renderMetrics() {
      const box = $("metrics");
      $("metrics-note").textContent = model.metrics === "on" ? "every 2 s, the last 2 minutes"
        : model.metrics === "forbidden" ? "the metrics need the read role over every machine, which this token does not have"
        : 'metrics are off: add "metrics": {"listen": "127.0.0.1:9464"} to the topology';
      for (const [id, plot] of Object.entries(model.plots)) {
        let node = box.querySelector('.plot[data-series="' + id + '"]');
        if (!node) {
          node = el("div", { class: "plot", "data-series": id });
          node.append(el("span", { class: "label" }, plot.label), el("span", { class: "value" }), svg("svg", { viewBox: "0 0 " + plotPoints + " 28", preserveAspectRatio: "none" }));
          box.append(node);
        }
        const last = plot.points[plot.points.length - 1];
        node.setAttribute("data-last", last === null ? "" : String(last));
        node.querySelector(".value").textContent = last === null ? "–" : (Math.abs(last) >= 100 ? last.toFixed(0) : last.toFixed(2));
        const top = Math.max(1e-9, ...plot.points.filter((v) => v !== null));
        const chart = node.querySelector("svg"); chart.replaceChildren();
        let run = [];
        const flush = () => { if (run.length > 0) chart.append(svg("polyline", { points: run.join(" "), "vector-effect": "non-scaling-stroke" })); run = []; };
        plot.points.forEach((v, i) => {
          if (v === null) return flush();
          run.push((i + plotPoints - plot.points.length) + "," + (27 - 26 * v / top).toFixed(2));
        });
        flush();
      }
    }

    function renderEffects() {
      const body = $("effects").tBodies[0]; body.replaceChildren();
      const now = Date.now();
      for (const e of Object.values(model.effects)) {
        const row = el("tr", { "data-effect": JSON.stringify(e.effect), "data-address": e.address });
        const cancel = el("button", {}, "cancel");
        cancel.disabled = !may("admin", e.address);
        cancel.title = cancel.disabled ? "cancelling needs the admin role" : "";
        cancel.onclick = () => post("/api/cancel", { address: e.address, effect: e.effect });
        const cell = el("td"); cell.append(cancel);
        // A timer shows the time left to its deadline (its worker's clock); other work how long it has run.
        const left = e.deadline === undefined ? null : Math.max(0, Math.round((e.deadline - now) / 100) / 10);
        const time = left === null ? Math.max(0, Math.round((now - e.since) / 100) / 10) + " s" : "fires in " + left + " s";
        row.dataset.kind = e.kind || "io-call";
        row.append(el("td", {}, e.address), el("td", {}, JSON.stringify(e.effect)), el("td", { class: "kind" }, e.kind || "io-call"),
                   el("td", {}, e.request), el("td", {}, e.worker), el("td", { class: "time" }, time), cell);
        body.append(row);
      }
    }

    function renderGraph() {
      const box = $("graph");
      if (!selected) return;
      const machineName = selected.split("/")[0];
      const machine = model.topology.machines.find((m) => m.name === machineName);
      const state = model.states[selected];
      $("graph-title").textContent = selected + (machine ? " (" + machine.type + ")" : "");
      $("state-json").textContent = state ? JSON.stringify(state.state, null, 2) : "no state seen yet";
      const graph = machine && model.topology.graphs[machine.type];
      if (!graph) {
        box.replaceChildren(el("p", {}, machine ? "No graph: the worker does not describe " + machine.type + " (worker.checkable)." : ""));
        return;
      }
      box.replaceChildren(draw(graph, state ? state.node : null));
    }

    function draw(graph, current) {
      const names = [...graph.reachable];
      for (const n of graph.unreachable || []) if (!names.includes(n)) names.push(n);
      const layer = { [graph.initial]: 0 };
      const queue = [graph.initial];
      while (queue.length) {
        const from = queue.shift();
        for (const e of graph.edges) if (e.from === from && layer[e.to] === undefined) { layer[e.to] = layer[from] + 1; queue.push(e.to); }
      }
      const maxLayer = Math.max(0, ...Object.values(layer));
      for (const n of names) if (layer[n] === undefined) layer[n] = maxLayer + 1;
      // Top to bottom: a layer per row, its states side by side.
      const columns = {}; const pos = {};
      const W = 150, H = 32, GX = 40, GY = 56;
      for (const n of names) { const l = layer[n]; columns[l] = (columns[l] || 0) + 1; pos[n] = { x: 20 + (columns[l] - 1) * (W + GX), y: 30 + l * (H + GY) }; }
      const width = 40 + Math.max(...Object.values(columns)) * (W + GX);
      const height = 60 + (Math.max(...Object.values(layer)) + 1) * (H + GY);
      const root = svg("svg", { viewBox: "0 0 " + width + " " + height, "data-machine": graph.machine });
      const defs = svg("defs"); const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" });
      marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8c8f94" })); defs.append(marker); root.append(defs);
      const pairs = {};
      for (const e of graph.edges) { const k = e.from + "→" + e.to; (pairs[k] = pairs[k] || []).push(e.event); }
      for (const [k, events] of Object.entries(pairs)) {
        const [from, to] = k.split("→"); const a = pos[from], b = pos[to];
        if (!a || !b) continue;
        const g = svg("g", { class: "edge" + (graph.edges.some((e) => e.from === from && e.to === to && e.timeout) ? " timeout" : "") });
        let d, lx, ly;
        if (from === to) {
          d = `M${a.x + W},${a.y + 8} C${a.x + W + 30},${a.y - 4} ${a.x + W + 30},${a.y + H + 4} ${a.x + W},${a.y + H - 8}`; lx = a.x + W + 4; ly = a.y - 4;
        } else {
          const down = b.y > a.y;
          const x1 = a.x + W / 2, y1 = down ? a.y + H : a.y, x2 = b.x + W / 2, y2 = down ? b.y : b.y + H;
          // An edge back up, or along its row, bends aside so that it does not cross the states.
          const bend = down ? 0 : 60; const cx = (x1 + x2) / 2 + bend, cy = (y1 + y2) / 2;
          d = `M${x1},${y1} Q${cx},${cy} ${x2},${y2}`; lx = cx; ly = cy;
        }
        g.append(svg("path", { d }), svg("text", { x: lx, y: ly, "text-anchor": "middle" }, events.join(", ")));
        root.append(g);
      }
      for (const n of names) {
        const classes = ["node"];
        if (n === graph.initial) classes.push("initial");
        if ((graph.terminal || []).includes(n)) classes.push("terminal");
        if (n === current) classes.push("current");
        const g = svg("g", { class: classes.join(" "), "data-node": n, transform: `translate(${pos[n].x},${pos[n].y})` });
        g.append(svg("rect", { width: W, height: H, rx: 6 }), svg("text", { x: W / 2, y: H / 2 }, n));
        root.append(g);
      }
      return root;
    }

    async function post(path, body) {
      const result = $("send-result");
      try {
        const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json", "X-Grove-View": "1" }, body: JSON.stringify(body), credentials: "same-origin" });
        const text = await response.text();
        result.className = response.ok ? "ok" : "error";
        result.textContent = (response.ok ? "" : response.status + ": ") + text;
      } catch (error) {
        result.className = "error"; result.textContent = String(error);
      }
    }

    $("send-form").onsubmit = (event) => {
      event.preventDefault();
      let value = $("send-event").value.trim();
      try { value = JSON.parse(value); } catch { /* a bare case name */ }
      post("/api/send", { address: $("send-address").value.trim(), event: value });
    };
    $("keyed-search").oninput = render;

    function connect() {
      const source = new EventSource("/events");
      source.onopen = () => { $("connection").textContent = "live"; $("connection").className = "up"; };
      source.onmessage = (message) => { apply(JSON.parse(message.data)); schedule(); };
      source.onerror = () => { $("connection").textContent = "reconnecting"; $("connection").className = "down"; };
    }
    // Drawn at the next animation frame, or within 250 ms when none comes (a browser that
    // draws no frames for the page, hidden or headless, runs no frame callbacks): an update is
    // never left applied and undrawn, which no later update could mend while `dirty` held.
    let dirty = false;
    function schedule() {
      if (dirty) return;
      dirty = true;
      const draw = () => { if (dirty) { dirty = false; render(); } };
      requestAnimationFrame(draw);
      setTimeout(draw, 250);
    }
    setInterval(renderEffects, 1000);
    connect();
    """#
}
