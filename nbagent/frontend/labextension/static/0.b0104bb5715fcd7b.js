"use strict";(self.rspackChunknbagent_frontend=self.rspackChunknbagent_frontend||[]).push([[0],{12(e,n,t){var a=t(13),r=t.n(a),o=t(14),l=(t.n(o))()(r());l.push([e.id,`/*
 * The agent's transcript (live and saved): a card per tool call, its state in
 * colour (running, waiting for you, ok, error, denied, interrupted), the
 * ToolSearch table, the answer set apart. Only theme variables, so light and
 * dark themes both fit. Without the extension the transcript still reads:
 * status marks are text, cards are plain <details>.
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
`,""]),t.d(n,{},{A:l})},14(e){e.exports=function(e){var n=[];return n.toString=function(){return this.map(function(n){var t="",a=void 0!==n[5];return n[4]&&(t+="@supports (".concat(n[4],") {")),n[2]&&(t+="@media ".concat(n[2]," {")),a&&(t+="@layer".concat(n[5].length>0?" ".concat(n[5]):""," {")),t+=e(n),a&&(t+="}"),n[2]&&(t+="}"),n[4]&&(t+="}"),t}).join("")},n.i=function(e,t,a,r,o){"string"==typeof e&&(e=[[null,e,void 0]]);var l={};if(a)for(var i=0;i<this.length;i++){var c=this[i][0];null!=c&&(l[c]=!0)}for(var s=0;s<e.length;s++){var d=[].concat(e[s]);a&&l[d[0]]||(void 0!==o&&(void 0===d[5]||(d[1]="@layer".concat(d[5].length>0?" ".concat(d[5]):""," {").concat(d[1],"}")),d[5]=o),t&&(d[2]&&(d[1]="@media ".concat(d[2]," {").concat(d[1],"}")),d[2]=t),r&&(d[4]?(d[1]="@supports (".concat(d[4],") {").concat(d[1],"}"),d[4]=r):d[4]="".concat(r)),n.push(d))}},n}},13(e){e.exports=function(e){return e[1]}},6(e){var n=[];function t(e){for(var t=-1,a=0;a<n.length;a++)if(n[a].identifier===e){t=a;break}return t}function a(e,a){for(var r={},o=[],l=0;l<e.length;l++){var i=e[l],c=a.base?i[0]+a.base:i[0],s=r[c]||0,d="".concat(c," ").concat(s);r[c]=s+1;var p=t(d),u={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==p)n[p].references++,n[p].updater(u);else{var g=function(e,n){var t=n.domAPI(n);return t.update(e),function(n){n?(n.css!==e.css||n.media!==e.media||n.sourceMap!==e.sourceMap||n.supports!==e.supports||n.layer!==e.layer)&&t.update(e=n):t.remove()}}(u,a);a.byIndex=l,n.splice(l,0,{identifier:d,updater:g,references:1})}o.push(d)}return o}e.exports=function(e,r){var o=a(e=e||[],r=r||{});return function(e){e=e||[];for(var l=0;l<o.length;l++){var i=t(o[l]);n[i].references--}for(var c=a(e,r),s=0;s<o.length;s++){var d=t(o[s]);0===n[d].references&&(n[d].updater(),n.splice(d,1))}o=c}}},8(e){var n={};e.exports=function(e,t){var a=function(e){if(void 0===n[e]){var t=document.querySelector(e);if(window.HTMLIFrameElement&&t instanceof window.HTMLIFrameElement)try{t=t.contentDocument.head}catch(e){t=null}n[e]=t}return n[e]}(e);if(!a)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");a.appendChild(t)}},10(e){e.exports=function(e){var n=document.createElement("style");return e.setAttributes(n,e.attributes),e.insert(n,e.options),n}},9(e,n,t){e.exports=function(e){var n=t.nc;n&&e.setAttribute("nonce",n)}},7(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var n=e.insertStyleElement(e);return{update:function(t){var a,r,o;a="",t.supports&&(a+="@supports (".concat(t.supports,") {")),t.media&&(a+="@media ".concat(t.media," {")),(r=void 0!==t.layer)&&(a+="@layer".concat(t.layer.length>0?" ".concat(t.layer):""," {")),a+=t.css,r&&(a+="}"),t.media&&(a+="}"),t.supports&&(a+="}"),(o=t.sourceMap)&&"u">typeof btoa&&(a+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(o))))," */")),e.styleTagTransform(a,n,e.options)},remove:function(){var e;null===(e=n).parentNode||e.parentNode.removeChild(e)}}}},11(e){e.exports=function(e,n){if(n.styleSheet)n.styleSheet.cssText=e;else{for(;n.firstChild;)n.removeChild(n.firstChild);n.appendChild(document.createTextNode(e))}}},5(e,n,t){var a=t(6),r=t.n(a),o=t(7),l=t.n(o),i=t(8),c=t.n(i),s=t(9),d=t.n(s),p=t(10),u=t.n(p),g=t(11),b=t.n(g),f=t(12),v={};v.styleTagTransform=b(),v.setAttributes=d(),v.insert=c().bind(null,"head"),v.domAPI=l(),v.insertStyleElement=u(),r()(f.A,v),f.A&&f.A.locals&&f.A.locals}}]);