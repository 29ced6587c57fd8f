// Words the hub's two pages share (hub.js, live.js): a board's phase, a game's result with its
// reason, why a game is not in the standings — from the codes on the wire, in zh-CN or English.
// No code reaches a page: an unknown reason shows the result alone, an unknown phase nothing.
"use strict";
(function () {
  const W = {
    "zh-CN": {
      idle: "空闲", ready: "就绪", running: "进行中", paused: "暂停", finished: "结束",
      red: "红胜", black: "黑胜", draw: "和棋", both: "双方判负",
      no_players: "缺少棋手姓名", not_swiss: "非积分编排对局", round_out_of_range: "轮次超出规程",
      plays_himself: "棋手与自己对局", plays_twice: "棋手同轮重复", other: "无法计入",
      round: "第{n}轮",
      reasons: {resignation: "认输", resign: "认输", resigned: "认输", checkmate: "将死",
        stalemate: "困毙", flag: "超时", fouls: "犯规满限", agreed: "协议和棋", agreed_draw: "协议和棋",
        draw_black_wins: "和棋黑胜", double_forfeit: "双方判负", late: "迟到",
        power_switch: "擅自关闭计时钟", arbiter: "裁判录入", repetition_draw: "不变作和",
        move_limit_draw: "自然限着", theoretical_draw: "简明理论和棋",
        early_draw_not_varied: "20回合内不变作和", forbidden_repetition: "禁着未变",
        misconduct: "无理取闹", disobedience: "不服从裁判", suicide_move: "不应将/送吃老将",
        move_rule_violations: "两次违反行棋规定", phone_call: "接打手机", phone: "手机"},
    },
    "en": {
      idle: "idle", ready: "ready", running: "running", paused: "paused", finished: "finished",
      red: "Red wins", black: "Black wins", draw: "Draw", both: "Both lose",
      no_players: "players not known", not_swiss: "not a Swiss game", round_out_of_range: "round outside the regulation",
      plays_himself: "a player against himself", plays_twice: "a player twice in a round", other: "cannot be ranked",
      round: "Round {n}",
      reasons: {resignation: "resigned", resign: "resigned", resigned: "resigned", checkmate: "checkmate",
        stalemate: "stalemate", flag: "flag fell", fouls: "foul limit", agreed: "agreed", agreed_draw: "agreed",
        draw_black_wins: "draw: black wins", double_forfeit: "both lose", late: "late",
        power_switch: "clock switched off", arbiter: "by the arbiter", repetition_draw: "repetition",
        move_limit_draw: "move limit", theoretical_draw: "theoretical draw",
        early_draw_not_varied: "early draw not varied", forbidden_repetition: "forbidden repetition",
        misconduct: "misconduct", disobedience: "disobedience", suicide_move: "illegal king exposure",
        move_rule_violations: "two move-rule violations", phone_call: "phone call", phone: "phone"},
    },
  };
  const of = (lang) => W[lang === "en" ? "en" : "zh-CN"];
  window.QZW = {
    phase: (phase, lang) => (typeof phase === "string" && Object.hasOwn(of(lang), phase) ? of(lang)[phase] : ""),
    // {winner, reason} (a board state's, a result event's data) -> 红胜 · 认输 / Red wins · resigned
    result(result, lang) {
      if (!result || typeof result !== "object") return "";
      const w = of(lang);
      const reason = typeof result.reason === "string" && Object.hasOwn(w.reasons, result.reason) ? w.reasons[result.reason] : "";
      const head = result.winner === "red" ? w.red : result.winner === "black" ? w.black
        : result.reason === "double_forfeit" ? w.both : w.draw;
      return reason && reason !== head ? `${head} · ${reason}` : head;
    },
    skipped: (code, lang) => of(lang)[code && Object.hasOwn(W.en, code) && !["round", "reasons"].includes(code) ? code : "other"],
    // a station's game id: r3-b12 -> 第3轮 / Round 3; any other id as it is
    game(game, lang) {
      const m = /^r(\d+)-b\d+$/.exec(game || "");
      return m ? of(lang).round.replace("{n}", m[1]) : game || "";
    },
  };
})();
