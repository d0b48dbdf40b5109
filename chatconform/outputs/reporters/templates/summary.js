// The filters (only failures, one contract, one provider), kept in the address's hash so a
// link such as report.html#only=failures&provider=glm opens the page filtered (and
// &open=f-2 with a finding open); opening a cell's details; and the copy buttons.
// Everything it reads is the page's own DOM.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var only = form.elements.only, contract = form.elements.contract, provider = form.elements.provider;
  form.hidden = false;

  function choose(select, value) {
    var known = Array.prototype.some.call(select.options, function (o) { return o.value === value; });
    select.value = known ? value : "";
  }

  function read() {
    var params = new URLSearchParams(location.hash.slice(1));
    only.checked = params.get("only") === "failures";
    choose(contract, params.get("contract") || "");
    choose(provider, params.get("provider") || "");
    var finding = params.get("open") && document.getElementById(params.get("open"));
    if (finding && finding.matches("details.finding")) { finding.open = true; }
  }

  function write() {
    var params = new URLSearchParams();
    if (only.checked) { params.set("only", "failures"); }
    if (contract.value) { params.set("contract", contract.value); }
    if (provider.value) { params.set("provider", provider.value); }
    var text = params.toString();
    try {
      history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
    } catch (e) { /* a browser that refuses it here: the filter still applies */ }
  }

  function each(selector, fn) { Array.prototype.forEach.call(document.querySelectorAll(selector), fn); }

  function apply() {
    var c = contract.value, p = provider.value, shown = 0, total = 0;
    each("#matrix tr[data-check]", function (row) {
      row.hidden = (only.checked && !row.hasAttribute("data-bad")) || (c && row.dataset.contract !== c) ||
        (p && row.dataset.contract !== "payload");
      total += 1;
      shown += row.hidden ? 0 : 1;
    });
    each("#matrix tbody[data-contract]", function (group) {
      group.hidden = !group.querySelector("tr[data-check]:not([hidden])");
    });
    each("details.provider", function (section) {
      var rows = section.querySelectorAll("tr[data-check]"), visible = 0;
      Array.prototype.forEach.call(rows, function (row) {
        row.hidden = only.checked && !row.hasAttribute("data-bad");
        visible += row.hidden ? 0 : 1;
      });
      section.hidden = (p && section.dataset.provider !== p) || (c && c !== "payload") || visible === 0;
      if (p && !section.hidden) { section.open = true; }
    });
    each("details.finding", function (finding) {
      finding.hidden = (c && finding.dataset.contract !== c) || (p && finding.dataset.provider !== p);
    });
    document.getElementById("shown").textContent = shown + " of " + total + " checks shown";
  }

  function open(id) {
    var target = document.getElementById(id);
    if (!target || target.tagName !== "DETAILS") { return false; }
    target.hidden = false;
    target.open = true;
    target.scrollIntoView({block: "start"});
    return true;
  }

  function copy(button) {
    var text = document.getElementById(button.dataset.copy).textContent;
    function done() {
      button.textContent = "copied";
      setTimeout(function () { button.textContent = "copy"; }, 1500);
    }
    function fallback() {  // file:// pages and older browsers: a selected textarea
      var area = document.createElement("textarea");
      area.value = text;
      document.body.appendChild(area);
      area.select();
      try { if (document.execCommand("copy")) { done(); } } catch (e) { /* nothing to copy with */ }
      area.remove();
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-finding]");
    if (link && open(link.dataset.finding)) { event.preventDefault(); return; }
    var button = event.target.closest("button[data-copy]");
    if (button) { copy(button); }
  });
  form.addEventListener("change", function () { write(); apply(); });
  window.addEventListener("hashchange", function () {
    if (!open(location.hash.slice(1))) { read(); apply(); }
  });
  read();
  apply();
  if (location.hash.length > 1) { open(location.hash.slice(1)); }
}());
