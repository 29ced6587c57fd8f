// The arbiter station's sound: a short WebAudio beep per new alert (the AudioContext starts on
// a tap: QZ.sound.unlock on the first pointerdown or the login). QZ.beeps counts the beeps, so
// a test sees one even on a machine without a sound device.
"use strict";
(function () {
  let audio = null;
  QZ.beeps = 0;
  function unlock() {
    try {
      if (!audio) audio = new (window.AudioContext || window.webkitAudioContext)();
      if (audio.state === "suspended") audio.resume();
    } catch (e) { audio = null; }
  }
  document.addEventListener("pointerdown", unlock);
  function beep() {
    QZ.beeps += 1;
    if (!audio) return;
    try {
      const osc = audio.createOscillator(), gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.25, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.4);
    } catch (e) { /* no sound device: the list still shows it */ }
  }
  QZ.sound = { unlock, beep };
})();
