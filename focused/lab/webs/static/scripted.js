// The script of every page of a JavaScript-built host of the offline web
// (focused web generate --js): the page's HTML is an empty shell, and this builds its text and
// links from the page's data, a JSON file on its host, as a single-page application does.
// A crawler that does not run scripts sees a title and nothing else.
(function () {
  "use strict";
  var app = document.getElementById("app");
  fetch(app.getAttribute("data-source"))
    .then(function (reply) {
      return reply.json();
    })
    .then(function (data) {
      var parts = document.createRange().createContextualFragment(data.html);
      app.appendChild(parts);
      // A tracker some sites call: the offline web points it where a test needs it.
      if (data.beacon) {
        fetch(data.beacon, { mode: "no-cors" }).catch(function () {});
      }
    });
})();
