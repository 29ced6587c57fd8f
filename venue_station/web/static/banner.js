// The station's own troubles, on every page (issue 28): the broker lost (no board's news
// arrives; the clocks shown are the last known and are not run on), the store not writing.
// Polls /api/station (public, small) every 2 s; a page needs only this one script tag. Its
// words are its own (both languages), so it needs no other script.
"use strict";
(function () {
  const TEXT = {
    "zh-CN": {
      broker_down: "与消息服务器断开（自 {since} 起）：各台状态未知，显示的时间不是实时的",
      store_failing: "比赛数据未能保存（自 {since} 起；磁盘已满或写入失败）：请立即通知技术人员，各台计时照常，空间恢复后自动补存",
      boards_silent: "{count} 个台次自 {since} 起无消息（节点离开未留遗嘱）：状态未知，请检查计时节点",
      unverified_decisions: "{count} 项判决未经本站核实（由计时节点重放）：请在裁判台的提醒中逐项确认",
      station_unreachable: "无法连接到裁判站（自 {since} 起）：页面显示的不是实时信息",
      backup_failing: "比赛数据备份失败（自 {since} 起）：请检查备份磁盘或U盘，通知技术人员",
    },
    en: {
      broker_down: "Broker link lost (since {since}): board states unknown, times shown are not live",
      store_failing: "Results are not being stored (since {since}; disk full or write failure): call the technician now; the clocks run on and what was missed is stored once there is room",
      boards_silent: "{count} board(s) silent since {since} (node gone without its will): state unknown, check the node",
      unverified_decisions: "{count} decision(s) not verified by this station (replayed by the nodes): confirm each in the arbiter page's alerts",
      station_unreachable: "Station unreachable (since {since}): this page is not live",
      backup_failing: "Backups are failing (since {since}): check the backup disk or USB stick, call the technician",
    },
  };
  function lang() {
    let saved = null;
    try { saved = localStorage.getItem("qz.lang"); } catch (e) { /* private mode */ }
    const q = new URLSearchParams(location.search).get("lang");
    const pick = q || saved || document.documentElement.lang || "zh-CN";
    return pick.toLowerCase().startsWith("en") ? "en" : "zh-CN";
  }
  function hhmmss(ms) {
    return ms ? new Date(ms).toLocaleTimeString(lang() === "en" ? "en-GB" : "zh-CN", { hour12: false }) : "?";
  }
  let unreachableSince = null;
  function show(alarms) {
    // The boards' times stop running on while the station cannot see them (common.js reads it).
    // A silent board's card stops its own clock (common.js); the others run on.
    const blind = alarms.find((a) => a.code === "broker_down" || a.code === "station_unreachable");
    const stale = blind ? blind.since_ms || Date.now() : null;
    if (stale !== (window.QZ_STALE || null)) {
      window.QZ_STALE = stale;
      const QZ = window.QZ;
      if (QZ && QZ.wake) {
        // The cards are drawn again as of then first (their timer is queued before this
        // one): no clock is seen running on under the banner.
        QZ.wake();
        setTimeout(() => draw(alarms), 0);
        return;
      }
    }
    draw(alarms);
  }
  function draw(alarms) {
    let bar = document.getElementById("qz-alarm");
    if (!alarms.length) {
      if (bar) bar.remove();
      return;
    }
    if (!bar) {
      bar = document.createElement("div");
      bar.id = "qz-alarm";
      bar.setAttribute("role", "alert");
      // in the page's flow, held at the top: it pushes the page down, never over its
      // buttons (fixed, it covered the prize list's CSV and print links: an outsider)
      bar.style.cssText = "position:sticky;top:0;z-index:9999;background:#b00020;" +
        "color:#fff;font:bold 18px/1.4 sans-serif;padding:8px 12px;text-align:center";
      document.body.prepend(bar); // (not on paper: each page's print style hides it)
    }
    const table = TEXT[lang()];
    bar.textContent = alarms
      .map((a) => (table[a.code] || table.store_failing).split("{since}").join(hhmmss(a.since_ms))
        .split("{count}").join(String(a.count || 0)))
      .join(" · ");
    bar.dataset.codes = alarms.map((a) => a.code).join(" ");
  }
  async function poll() {
    try {
      const r = await fetch("/api/station", { cache: "no-store" });
      const info = await r.json();
      unreachableSince = null;
      show(Array.isArray(info.alarms) ? info.alarms : []);
    } catch (e) {
      unreachableSince = unreachableSince || Date.now();
      show([{ code: "station_unreachable", since_ms: unreachableSince }]);
    }
  }
  function start() { poll(); setInterval(poll, 2000); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
