// Ladder view: the page of `ladder view`. It keeps the server's State (a
// snapshot, then deltas over server-sent events) and redraws only the node
// cards a delta touched, once per animation frame.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { nodes: {}, pods: {}, pdbs: {}, steps: [], clock: null, error: "", source: "" };
  const podsByNode = new Map(); // node name -> Set of pod keys ("" for pending)
  const cards = new Map(); // node name -> card element
  const groupEls = new Map(); // group id -> {section, list, heading}
  const dirty = new Set(); // node names to redraw
  let structureDirty = true; // groups, legend, counts, steps
  let frame = 0;
  let snapshotPending = false; // the next render draws a snapshot

  let selected = "";
  let versions = []; // sorted kubelet versions, for colours
  // Measurements a test (or a curious user, in the console) can read.
  const stats = window.ladderView = {
    snapshotAt: 0, firstRenderMs: -1, renders: 0, deltas: 0, lastRenderMs: 0, maxRenderMs: 0,
    lastDeltaApplyMs: 0, maxDeltaApplyMs: 0, maxDeltaRenderMs: 0, bytes: 0, seq: 0, resyncs: 0,
  };

  function indexPod(key, pod, add) {
    const node = pod.node || "";
    let set = podsByNode.get(node);
    if (add) {
      if (!set) podsByNode.set(node, (set = new Set()));
      set.add(key);
    } else if (set) {
      set.delete(key);
    }
    dirty.add(node);
  }

  function reset(s) {
    state.nodes = s.nodes || {};
    state.pods = s.pods || {};
    state.pdbs = s.pdbs || {};
    state.steps = s.steps || [];
    state.clock = s.clock || null;
    state.error = s.error || "";
    state.source = s.source || "";
    podsByNode.clear();
    for (const [k, p] of Object.entries(state.pods)) indexPod(k, p, true);
    for (const k of Object.keys(state.nodes)) dirty.add(k);
    for (const k of cards.keys()) dirty.add(k);
    structureDirty = true;
  }

  function apply(d) {
    const t0 = performance.now();
    for (const [k, n] of Object.entries(d.nodes || {})) {
      const old = state.nodes[k];
      if (!old || old.group !== n.group || old.kind !== n.kind || old.version !== n.version) structureDirty = true;
      state.nodes[k] = n;
      dirty.add(k);
    }
    for (const k of d.goneNodes || []) { delete state.nodes[k]; dirty.add(k); structureDirty = true; }
    for (const [k, p] of Object.entries(d.pods || {})) {
      const old = state.pods[k];
      if (old) indexPod(k, old, false);
      state.pods[k] = p;
      indexPod(k, p, true);
    }
    for (const k of d.gonePods || []) {
      const old = state.pods[k];
      if (old) { indexPod(k, old, false); delete state.pods[k]; }
    }
    for (const [k, p] of Object.entries(d.pdbs || {})) state.pdbs[k] = p;
    for (const k of d.gonePDBs || []) delete state.pdbs[k];
    if (d.stepsChanged) state.steps = d.steps || [];
    if (d.clock) state.clock = d.clock;
    if (d.error !== undefined) state.error = d.error;
    structureDirty = true;
    const ms = performance.now() - t0;
    stats.lastDeltaApplyMs = ms;
    stats.maxDeltaApplyMs = Math.max(stats.maxDeltaApplyMs, ms);
  }

  function schedule() { if (!frame) frame = requestAnimationFrame(render); }

  // ---- drawing ----
  function cmpVersion(a, b) {
    const pa = a.replace(/^v/, "").split(/[.+-]/).map(Number), pb = b.replace(/^v/, "").split(/[.+-]/).map(Number);
    for (let i = 0; i < 3; i++) if ((pa[i] || 0) !== (pb[i] || 0)) return (pa[i] || 0) - (pb[i] || 0);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  // Colour-blind-safe palette (Okabe-Ito), oldest version first; each
  // version is also written on its cards, so colour is never the only cue.
  const palette = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999"];
  function colour(v) { const i = versions.indexOf(v); return i < 0 ? "#dddddd" : palette[i % palette.length]; }
  function minor(v) { const m = /^v?(\d+)\.(\d+)/.exec(v || ""); return m ? m[1] + "." + m[2] : (v || "?"); }

  function nodeStates(n) {
    const out = [];
    if (!n.ready) out.push("NotReady");
    if (n.draining || (n.cordoned && hasTerminating(n.name))) out.push("draining");
    else if (n.cordoned) out.push("cordoned");
    return out;
  }
  function hasTerminating(node) {
    const set = podsByNode.get(node);
    if (!set) return false;
    for (const k of set) { const p = state.pods[k]; if (p && p.terminating && !p.daemonSet) return true; }
    return false;
  }
  function groupId(n) { return (n.kind || "none") + "/" + (n.group || ""); }
  const kindOrder = { "managed": 0, "self-managed": 1, "karpenter": 2, "fargate": 3, "none": 4 };
  const kindName = { "managed": "managed node group", "self-managed": "self-managed group", "karpenter": "Karpenter NodePool", "fargate": "Fargate profile", "none": "no node group" };

  function podBoxes(container, keys, limit) {
    container.textContent = "";
    let i = 0;
    const sorted = Array.from(keys || []).sort();
    for (const k of sorted) {
      if (limit && i++ >= limit) {
        const more = document.createElement("span");
        more.textContent = " +" + (sorted.length - limit) + " more";
        container.appendChild(more);
        break;
      }
      const p = state.pods[k];
      const b = document.createElement("span");
      b.className = "pod" + (p.terminating ? " terminating" : p.ready ? "" : " unready") + (p.daemonSet ? " ds" : "");
      b.title = k + (p.terminating ? " (terminating)" : p.ready ? " (Ready)" : " (not Ready)");
      container.appendChild(b);
    }
  }

  function drawCard(name) {
    const n = state.nodes[name];
    let card = cards.get(name);
    if (!n) {
      if (card) { unplace(card, name); cards.delete(name); }
      if (selected === name) showDetails("");
      return;
    }
    const gid = groupId(n);
    const g = groupEl(gid, n);
    if (!card) {
      card = document.createElement("div");
      card.className = "node";
      card.tabIndex = 0;
      card.setAttribute("role", "button");
      card.dataset.name = name;
      card.innerHTML = '<span class="name"></span><span class="ver"></span> <span class="state"></span><div class="pods" aria-hidden="true"></div>';
      cards.set(name, card);
    }
    if (card.dataset.group !== gid) {
      if (card.parentElement) unplace(card, name);
      card.dataset.group = gid;
      place(g, card, name);
    }
    const st = nodeStates(n);
    const set = podsByNode.get(name);
    let ready = 0, total = 0;
    if (set) for (const k of set) { total++; if (state.pods[k].ready) ready++; }
    card.className = "node" + (st.includes("NotReady") ? " notready" : "") + (st.includes("draining") ? " draining" : st.includes("cordoned") ? " cordoned" : "") + (selected === name ? " selected" : "");
    card.style.backgroundColor = colour(n.version);
    card.dataset.version = n.version;
    card.dataset.state = st.join(" ") || "ready";
    card.children[0].textContent = name;
    card.children[1].textContent = minor(n.version);
    card.children[2].textContent = st.join(" ");
    card.setAttribute("aria-label", `node ${name}, kubelet ${n.version}, ${st.join(", ") || "Ready"}, ${ready} of ${total} pods Ready`);
    podBoxes(card.children[3], set, 60);
    if (selected === name) showDetails(name);
  }

  // Cards stay sorted by name in their group: a binary search over the
  // group's sorted names, not a walk over its cards.
  function place(g, card, name) {
    const names = g.names;
    let lo = 0, hi = names.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (names[mid] < name) lo = mid + 1; else hi = mid; }
    names.splice(lo, 0, name);
    g.list.insertBefore(card, g.list.children[lo] || null);
  }
  function unplace(card, name) {
    const g = groupEls.get(card.dataset.group);
    if (g) {
      const i = g.names.indexOf(name);
      if (i >= 0) g.names.splice(i, 1);
    }
    card.remove();
  }

  function groupEl(gid, n) {
    let g = groupEls.get(gid);
    if (g) return g;
    const section = document.createElement("section");
    section.className = "group";
    section.dataset.group = gid;
    const h = document.createElement("h2");
    const btn = document.createElement("button");
    btn.type = "button";
    btn.setAttribute("aria-expanded", "true");
    const counts = document.createElement("span");
    counts.className = "counts";
    h.append(btn, " ", counts);
    const list = document.createElement("div");
    list.className = "nodes";
    list.setAttribute("role", "group");
    btn.addEventListener("click", () => {
      const open = list.hidden;
      list.hidden = !open;
      btn.setAttribute("aria-expanded", String(open));
    });
    section.append(h, list);
    g = { section, list, btn, counts, names: [], kind: n.kind || "none", name: n.group || "" };
    btn.textContent = (n.group || "(no group)") + " — " + kindName[g.kind];
    list.setAttribute("aria-label", btn.textContent);
    groupEls.set(gid, g);
    placeGroups();
    return g;
  }

  function placeGroups() {
    const main = $("groups");
    const sorted = Array.from(groupEls.values()).sort((a, b) => (kindOrder[a.kind] - kindOrder[b.kind]) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const g of sorted) main.appendChild(g.section);
    const pending = $("pending-group");
    if (pending) main.appendChild(pending);
  }

  function drawStructure() {
    const vs = new Set();
    for (const n of Object.values(state.nodes)) if (n.version) vs.add(n.version);
    const newVersions = Array.from(vs).sort(cmpVersion);
    if (newVersions.join() !== versions.join()) {
      // A card's colour is its version's place in the sorted list: only
      // when a version already shown moves do all cards change colour (a
      // newer version, the usual case, comes last).
      const moved = versions.some((v, i) => newVersions.indexOf(v) !== i && newVersions.includes(v));
      versions = newVersions;
      if (moved) for (const k of cards.keys()) dirty.add(k);
    }
    // Group headings: nodes per version and state.
    const per = new Map();
    for (const n of Object.values(state.nodes)) {
      const gid = groupId(n);
      let c = per.get(gid);
      if (!c) per.set(gid, (c = { total: 0, byVersion: new Map(), cordoned: 0, notReady: 0 }));
      c.total++;
      c.byVersion.set(minor(n.version), (c.byVersion.get(minor(n.version)) || 0) + 1);
      if (n.cordoned) c.cordoned++;
      if (!n.ready) c.notReady++;
    }
    for (const [gid, g] of groupEls) {
      const c = per.get(gid);
      if (!c) { g.section.remove(); groupEls.delete(gid); continue; }
      const parts = [c.total + (c.total === 1 ? " node" : " nodes")];
      for (const [v, k] of Array.from(c.byVersion).sort((a, b) => cmpVersion(a[0], b[0]))) parts.push(v + ": " + k);
      if (c.cordoned) parts.push(c.cordoned + " cordoned");
      if (c.notReady) parts.push(c.notReady + " NotReady");
      g.counts.textContent = parts.join(" · ");
    }
    // Legend.
    const legend = $("legend");
    legend.textContent = "";
    for (const v of versions) {
      const li = document.createElement("li");
      li.innerHTML = '<span class="swatch"></span>';
      li.firstChild.style.background = colour(v);
      li.append("kubelet " + v);
      legend.appendChild(li);
    }
    for (const [cls, label] of [["cordoned", "cordoned (stripes)"], ["draining", "draining (cross-hatch)"], ["notready", "NotReady (dashed red border)"]]) {
      const li = document.createElement("li");
      li.innerHTML = `<span class="swatch node ${cls}" style="width:1.6em;min-height:0;height:1.1em;padding:0"></span>`;
      li.append(label);
      legend.appendChild(li);
    }
    const podLegend = document.createElement("li");
    podLegend.innerHTML = '<span class="legend-pod pod"></span>pod Ready <span class="legend-pod pod unready"></span>not Ready <span class="legend-pod pod terminating"></span>terminating <span class="legend-pod pod ds"></span>DaemonSet';
    legend.appendChild(podLegend);
    // Counts.
    let pods = 0, ready = 0, pending = 0;
    for (const p of Object.values(state.pods)) { pods++; if (p.ready) ready++; if (!p.node) pending++; }
    const nodes = Object.keys(state.nodes).length;
    $("counts").textContent = `${nodes} nodes · ${pods} pods, ${ready} Ready` + (pending ? `, ${pending} pending` : "");
    $("counts").dataset.nodes = nodes;
    $("counts").dataset.pods = pods;
    // PDBs at their floor.
    const floor = Object.values(state.pdbs).filter((p) => p.expected > 0 && p.allowed <= 0).sort((a, b) => (a.key < b.key ? -1 : 1));
    const pdbs = $("pdbs");
    pdbs.textContent = floor.length ? "PodDisruptionBudgets at their floor (no disruption allowed): " : "No PodDisruptionBudget at its floor.";
    for (const p of floor) {
      const s = document.createElement("span");
      s.className = "floor";
      s.textContent = `${p.key}: ${p.healthy} healthy, floor ${p.floor}`;
      pdbs.appendChild(s);
    }
    // Steps.
    const steps = $("steps");
    steps.textContent = "";
    const mark = { done: "✓", started: "▶", failed: "✗", pending: "·" };
    for (const s of state.steps) {
      const li = document.createElement("li");
      li.className = s.state;
      li.textContent = `${mark[s.state] || ""} ${s.hop ? s.hop + " " : ""}${s.name} — ${s.state}` + (s.blockedBy ? ` (blocked by ${s.blockedBy})` : "") + (s.message && s.state === "failed" ? `: ${s.message}` : "");
      if (s.state === "started" || s.state === "failed") li.setAttribute("aria-current", "step");
      steps.appendChild(li);
    }
    // Error, source, clock.
    $("error").hidden = !state.error;
    $("error").textContent = state.error;
    $("source").textContent = state.source ? "— " + state.source : "";
    drawClock();
  }

  function drawPending() {
    const set = podsByNode.get("");
    let sec = $("pending-group");
    if (!set || set.size === 0) { if (sec) sec.remove(); return; }
    if (!sec) {
      sec = document.createElement("section");
      sec.id = "pending-group";
      sec.className = "group pending";
      sec.innerHTML = '<h2>Pending pods <span class="counts"></span></h2><div class="pods"></div>';
      $("groups").appendChild(sec);
    }
    sec.querySelector(".counts").textContent = set.size + " not on a node";
    podBoxes(sec.querySelector(".pods"), set, 500);
  }

  function fmtTime(s) {
    s = Math.round(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return (h ? h + "h" : "") + (h || m ? String(m).padStart(h ? 2 : 1, "0") + "m" : "") + String(sec).padStart(h || m ? 2 : 1, "0") + "s";
  }
  let seeking = false;
  function drawClock() {
    const c = state.clock;
    $("replay").hidden = !c;
    if (!c) return;
    $("play").textContent = c.paused ? "Play" : "Pause";
    const seek = $("seek");
    seek.max = String(Math.ceil(c.end));
    if (!seeking) seek.value = String(Math.floor(c.t));
    seek.setAttribute("aria-valuetext", fmtTime(c.t));
    $("clock").textContent = `${fmtTime(c.t)} of ${fmtTime(c.end)} (virtual)`;
    const sp = $("speed");
    if (!Array.from(sp.options).some((o) => Number(o.value) === c.speed)) {
      const o = document.createElement("option");
      o.value = String(c.speed);
      o.textContent = c.speed + "×";
      sp.appendChild(o);
    }
    sp.value = String(c.speed);
  }

  function render() {
    frame = 0;
    const t0 = performance.now();
    if (structureDirty) drawStructure();
    const t1 = performance.now();
    for (const name of dirty) if (name) drawCard(name);
    const t2 = performance.now();
    if (dirty.has("") || structureDirty) drawPending();
    stats.lastParts = [t1 - t0, t2 - t1, performance.now() - t2, dirty.size];
    dirty.clear();
    structureDirty = false;
    const ms = performance.now() - t0;
    stats.renders++;
    stats.lastRenderMs = ms;
    if (ms > stats.maxRenderMs) { stats.maxRenderMs = ms; stats.maxParts = stats.lastParts; }
    if (!snapshotPending && ms > stats.maxDeltaRenderMs) { stats.maxDeltaRenderMs = ms; stats.maxDeltaParts = stats.lastParts; }
    snapshotPending = false;
    if (stats.firstRenderMs < 0 && stats.snapshotAt) stats.firstRenderMs = performance.now() - stats.snapshotAt;
    document.body.dataset.seq = String(stats.seq);
  }

  // ---- details and keyboard ----
  function showDetails(name) {
    const el = $("details");
    const n = state.nodes[name];
    if (!n) { selected = ""; el.innerHTML = "<p>Focus or click a node (Tab, arrow keys) for its details.</p>"; return; }
    const prev = cards.get(selected);
    if (prev && selected !== name) prev.classList.remove("selected");
    selected = name;
    cards.get(name)?.classList.add("selected");
    el.textContent = "";
    const h = document.createElement("h2");
    h.textContent = name;
    const dl = document.createElement("dl");
    const row = (k, v) => { const dt = document.createElement("dt"); dt.textContent = k; const dd = document.createElement("dd"); dd.textContent = v; dl.append(dt, dd); };
    row("group", (n.group || "(none)") + " (" + kindName[n.kind || "none"] + ")");
    if (n.instanceType) row("instance type", n.instanceType);
    row("kubelet", n.version);
    row("state", nodeStates(n).join(", ") || "Ready");
    const ul = document.createElement("ul");
    const keys = Array.from(podsByNode.get(name) || []).sort();
    row("pods", String(keys.length));
    for (const k of keys) {
      const p = state.pods[k];
      const li = document.createElement("li");
      li.textContent = k + " — " + (p.terminating ? "terminating" : p.ready ? "Ready" : "not Ready") + (p.daemonSet ? " (DaemonSet)" : "");
      ul.appendChild(li);
    }
    el.append(h, dl, ul);
  }

  document.addEventListener("focusin", (e) => { const c = e.target.closest && e.target.closest(".node[data-name]"); if (c) showDetails(c.dataset.name); });
  document.addEventListener("click", (e) => { const c = e.target.closest && e.target.closest(".node[data-name]"); if (c) { c.focus(); showDetails(c.dataset.name); } });
  document.addEventListener("keydown", (e) => {
    const c = e.target.closest && e.target.closest(".node[data-name]");
    if (c && (e.key === "ArrowRight" || e.key === "ArrowLeft" || e.key === "Home" || e.key === "End")) {
      const all = Array.from(document.querySelectorAll(".node[data-name]"));
      const i = all.indexOf(c);
      const j = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : e.key === "Home" ? 0 : all.length - 1;
      if (all[j]) { all[j].focus(); e.preventDefault(); }
      return;
    }
    const tag = (e.target.tagName || "").toLowerCase();
    if (e.key === " " && state.clock && !["button", "input", "select", "textarea"].includes(tag)) {
      e.preventDefault();
      control({ action: state.clock.paused ? "play" : "pause" });
    }
  });

  // ---- replay controls ----
  function control(c) {
    fetch("api/replay", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(c) })
      .then((r) => { if (!r.ok) return r.text().then((t) => { state.error = t; structureDirty = true; schedule(); }); });
  }
  $("play").addEventListener("click", () => control({ action: state.clock && !state.clock.paused ? "pause" : "play" }));
  $("speed").addEventListener("change", (e) => control({ action: "speed", speed: Number(e.target.value) }));
  $("seek").addEventListener("input", (e) => { seeking = true; $("clock").textContent = fmtTime(Number(e.target.value)); });
  $("seek").addEventListener("change", (e) => { seeking = false; control({ action: "seek", t: Number(e.target.value) }); });

  // ---- the stream ----
  function connect() {
    const es = new EventSource("api/events");
    es.addEventListener("snapshot", (e) => {
      stats.bytes += e.data.length;
      const msg = JSON.parse(e.data);
      if (stats.snapshotAt) stats.resyncs++;
      stats.snapshotAt = performance.now();
      stats.seq = msg.seq;
      reset(msg.state);
      snapshotPending = true;
      $("conn").textContent = msg.state.clock ? "replay of a rehearsal, in virtual time" : "live: updated from the cluster's watches";
      schedule();
    });
    es.addEventListener("delta", (e) => {
      stats.bytes += e.data.length;
      const d = JSON.parse(e.data);
      if (d.seq !== stats.seq + 1) { es.close(); connect(); return; } // missed one: start again
      stats.seq = d.seq;
      stats.deltas++;
      apply(d);
      schedule();
    });
    es.onerror = () => {
      $("conn").textContent = "disconnected: reconnecting…";
      // Refused (503: every stream taken) the browser gives up: try again.
      if (es.readyState === EventSource.CLOSED) setTimeout(connect, 5000);
    };
  }
  connect();
})();
