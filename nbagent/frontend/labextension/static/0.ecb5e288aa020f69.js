"use strict";(self.rspackChunknbagent_frontend=self.rspackChunknbagent_frontend||[]).push([[0],{13(e,t,n){var a=n(14),r=n.n(a),o=n(15),i=(n.n(o))()(r());i.push([e.id,`/*
 * The agent's transcript (live and saved): a card per tool call, its state in
 * colour (running, waiting for you, ok, error, denied, interrupted), the
 * ToolSearch table, the answer set apart. Only theme variables, so light and
 * dark themes both fit. Without the extension the transcript still reads:
 * status marks are text, cards are plain <details>. A question the kernel
 * withdrew keeps its stdin box until the cell ends, disabled and greyed, saying
 * why where the answer would go.
 */
.nbagent-live .widget-html-content { line-height: 1.5; width: 100%; }
details.nbagent-call {
  --nbagent-state: var(--jp-ui-font-color2);
  margin: 3px 0;
  border: 1px solid var(--jp-border-color2);
  border-left: 3px solid var(--nbagent-state);
  border-radius: 3px;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
  line-height: 1.5;
}
details.nbagent-call > summary {
  padding: 2px 8px;
  cursor: pointer;
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
}
details.nbagent-call > summary::marker { color: var(--jp-ui-font-color3); }
details.nbagent-call .nbagent-mark {
  display: inline-block;
  min-width: 1.1em;
  color: var(--nbagent-state);
  font-weight: bold;
  text-align: center;
}
details.nbagent-call .nbagent-name { font-weight: 600; }
details.nbagent-call code.nbagent-arg {
  padding: 0;
  white-space: nowrap;
  background: none;
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}
details.nbagent-call .nbagent-result,
details.nbagent-call .nbagent-notes { color: var(--jp-ui-font-color2); }
details.nbagent-ok { --nbagent-state: var(--jp-success-color1); }
details.nbagent-error { --nbagent-state: var(--jp-error-color1); }
details.nbagent-error > summary .nbagent-result { color: var(--jp-error-color1); }
details.nbagent-denied { --nbagent-state: var(--jp-warn-color1); }
details.nbagent-denied > summary .nbagent-result { color: var(--jp-warn-color1); }
details.nbagent-interrupted { --nbagent-state: var(--jp-ui-font-color3); }
details.nbagent-running { --nbagent-state: var(--jp-brand-color1); }
details.nbagent-running > summary .nbagent-mark { animation: nbagent-pulse 1.2s ease-in-out infinite; }
@keyframes nbagent-pulse { 50% { opacity: 0.3; } }
details.nbagent-waiting {
  --nbagent-state: var(--jp-warn-color1);
  border-color: var(--jp-warn-color1);
  background: color-mix(in srgb, var(--jp-warn-color1) 10%, var(--jp-layout-color1));
}
details.nbagent-waiting > summary .nbagent-result { color: var(--jp-warn-color1); font-weight: 600; }
details.nbagent-call .nbagent-body { padding: 2px 8px 6px 26px; }
details.nbagent-call pre {
  margin: 4px 0;
  padding: 4px 8px;
  max-height: 24em;
  overflow: auto;
  border: none;
  border-radius: 3px;
  background: var(--jp-layout-color2);
  color: var(--jp-content-font-color1);
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  line-height: var(--jp-code-line-height);
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
details.nbagent-call pre code { padding: 0; background: none; }
details.nbagent-call .nbagent-asked,
details.nbagent-call .nbagent-reason { color: var(--jp-ui-font-color2); }
details.nbagent-call .nbagent-ask pre {
  border-left: 3px solid var(--jp-warn-color1);
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
}
details.nbagent-call .nbagent-choices kbd {
  padding: 0 5px;
  border: 1px solid var(--jp-border-color1);
  border-radius: 3px;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-code-font-family);
  font-weight: bold;
}
details.nbagent-call details > summary { color: var(--jp-ui-font-color2); cursor: pointer; }
table.nbagent-search {
  margin: 4px 0;
  border-collapse: collapse;
  border: none;
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
  line-height: 1.4;
  table-layout: auto;
}
table.nbagent-search caption { padding: 2px 0; text-align: left; color: var(--jp-ui-font-color2); }
table.nbagent-search th,
table.nbagent-search td {
  padding: 2px 10px 2px 0;
  border: none;
  border-bottom: 1px solid var(--jp-border-color2);
  background: none;
  text-align: left;
  vertical-align: top;
  white-space: normal;
}
table.nbagent-search th { color: var(--jp-ui-font-color2); font-weight: 600; }
table.nbagent-search .nbagent-score { text-align: right; font-variant-numeric: tabular-nums; }
table.nbagent-search code { padding: 0; background: none; font-family: var(--jp-code-font-family); }
table.nbagent-search tbody tr:nth-child(odd),
table.nbagent-search tbody tr:hover { background: none; }
ol.nbagent-web {
  margin: 4px 0;
  padding-left: 1.8em;
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
  line-height: 1.5;
}
ol.nbagent-web .nbagent-site { color: var(--jp-ui-font-color2); }
hr.nbagent-rule { display: none; }
.nbagent-answer {
  margin: 8px 0 4px;
  padding: 2px 12px;
  border-left: 3px solid var(--jp-brand-color1);
  border-radius: 3px;
  background: var(--jp-layout-color2);
}
.nbagent-narration { color: var(--jp-content-font-color2); }
.nbagent-meter { color: var(--jp-ui-font-color2); font-size: var(--jp-ui-font-size0); }
.nbagent-delta { color: var(--jp-ui-font-color2); }
.jp-OutputArea-stdin-item.nbagent-withdrawn .jp-Stdin-prompt { color: var(--jp-ui-font-color3); }
.jp-OutputArea-stdin-item.nbagent-withdrawn .jp-Stdin-input {
  width: auto;
  max-width: 100%;
  border: 1px dashed var(--jp-border-color1);
  background: transparent;
  cursor: not-allowed;
}
.jp-OutputArea-stdin-item.nbagent-withdrawn .jp-Stdin-input::placeholder {
  opacity: 1;
  color: var(--jp-ui-font-color2);
  font-style: italic;
}
/* A cell the agent inserted or changed, until a person edits it (src/marks.ts). */
.jp-Notebook .jp-Cell.nbagent-changed {
  box-shadow: inset 3px 0 0 var(--jp-brand-color1);
}
.jp-Notebook .jp-Cell.nbagent-changed .jp-InputPrompt::after {
  content: 'agent \xb1';
  display: block;
  color: var(--jp-brand-color1);
  font-size: var(--jp-ui-font-size0);
  font-family: var(--jp-ui-font-family);
}
.jp-Notebook .jp-Cell.nbagent-changed[data-nbagent-changed='inserted'] .jp-InputPrompt::after {
  content: 'agent +';
}
`,""]),n.d(t,{},{A:i})},15(e){e.exports=function(e){var t=[];return t.toString=function(){return this.map(function(t){var n="",a=void 0!==t[5];return t[4]&&(n+="@supports (".concat(t[4],") {")),t[2]&&(n+="@media ".concat(t[2]," {")),a&&(n+="@layer".concat(t[5].length>0?" ".concat(t[5]):""," {")),n+=e(t),a&&(n+="}"),t[2]&&(n+="}"),t[4]&&(n+="}"),n}).join("")},t.i=function(e,n,a,r,o){"string"==typeof e&&(e=[[null,e,void 0]]);var i={};if(a)for(var l=0;l<this.length;l++){var c=this[l][0];null!=c&&(i[c]=!0)}for(var s=0;s<e.length;s++){var d=[].concat(e[s]);a&&i[d[0]]||(void 0!==o&&(void 0===d[5]||(d[1]="@layer".concat(d[5].length>0?" ".concat(d[5]):""," {").concat(d[1],"}")),d[5]=o),n&&(d[2]&&(d[1]="@media ".concat(d[2]," {").concat(d[1],"}")),d[2]=n),r&&(d[4]?(d[1]="@supports (".concat(d[4],") {").concat(d[1],"}"),d[4]=r):d[4]="".concat(r)),t.push(d))}},t}},14(e){e.exports=function(e){return e[1]}},7(e){var t=[];function n(e){for(var n=-1,a=0;a<t.length;a++)if(t[a].identifier===e){n=a;break}return n}function a(e,a){for(var r={},o=[],i=0;i<e.length;i++){var l=e[i],c=a.base?l[0]+a.base:l[0],s=r[c]||0,d="".concat(c," ").concat(s);r[c]=s+1;var p=n(d),u={css:l[1],media:l[2],sourceMap:l[3],supports:l[4],layer:l[5]};if(-1!==p)t[p].references++,t[p].updater(u);else{var g=function(e,t){var n=t.domAPI(t);return n.update(e),function(t){t?(t.css!==e.css||t.media!==e.media||t.sourceMap!==e.sourceMap||t.supports!==e.supports||t.layer!==e.layer)&&n.update(e=t):n.remove()}}(u,a);a.byIndex=i,t.splice(i,0,{identifier:d,updater:g,references:1})}o.push(d)}return o}e.exports=function(e,r){var o=a(e=e||[],r=r||{});return function(e){e=e||[];for(var i=0;i<o.length;i++){var l=n(o[i]);t[l].references--}for(var c=a(e,r),s=0;s<o.length;s++){var d=n(o[s]);0===t[d].references&&(t[d].updater(),t.splice(d,1))}o=c}}},9(e){var t={};e.exports=function(e,n){var a=function(e){if(void 0===t[e]){var n=document.querySelector(e);if(window.HTMLIFrameElement&&n instanceof window.HTMLIFrameElement)try{n=n.contentDocument.head}catch(e){n=null}t[e]=n}return t[e]}(e);if(!a)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");a.appendChild(n)}},11(e){e.exports=function(e){var t=document.createElement("style");return e.setAttributes(t,e.attributes),e.insert(t,e.options),t}},10(e,t,n){e.exports=function(e){var t=n.nc;t&&e.setAttribute("nonce",t)}},8(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var t=e.insertStyleElement(e);return{update:function(n){var a,r,o;a="",n.supports&&(a+="@supports (".concat(n.supports,") {")),n.media&&(a+="@media ".concat(n.media," {")),(r=void 0!==n.layer)&&(a+="@layer".concat(n.layer.length>0?" ".concat(n.layer):""," {")),a+=n.css,r&&(a+="}"),n.media&&(a+="}"),n.supports&&(a+="}"),(o=n.sourceMap)&&"u">typeof btoa&&(a+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(o))))," */")),e.styleTagTransform(a,t,e.options)},remove:function(){var e;null===(e=t).parentNode||e.parentNode.removeChild(e)}}}},12(e){e.exports=function(e,t){if(t.styleSheet)t.styleSheet.cssText=e;else{for(;t.firstChild;)t.removeChild(t.firstChild);t.appendChild(document.createTextNode(e))}}},6(e,t,n){var a=n(7),r=n.n(a),o=n(8),i=n.n(o),l=n(9),c=n.n(l),s=n(10),d=n.n(s),p=n(11),u=n.n(p),g=n(12),b=n.n(g),f=n(13),v={};v.styleTagTransform=b(),v.setAttributes=d(),v.insert=c().bind(null,"head"),v.domAPI=i(),v.insertStyleElement=u(),r()(f.A,v),f.A&&f.A.locals&&f.A.locals}}]);