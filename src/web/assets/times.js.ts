/**
 * Times: every <time datetime> (layout.ts `when()`, "2025-03-01 14:05 UTC" without the script)
 * becomes relative ("3 min ago", "in 5 days"), or past a week the date and time in the browser's
 * time zone, with the exact UTC and local times on hover; refreshed every minute. A time marked
 * `data-local` (a moment said in another zone beside it) is written out in the browser's zone instead. Pieces that
 * change a datetime (live pages) call showTimes() to re-render at once.
 */
export const TIMES_JS = `  // Times relative to now, in the browser's time zone; the exact UTC time on hover. Its own scope, but for showTimes.
  var showTimes=(function(){
  function pad2(n){return n<10?"0"+n:""+n;}
  function utcText(d){return d.getUTCFullYear()+"-"+pad2(d.getUTCMonth()+1)+"-"+pad2(d.getUTCDate())+" "+pad2(d.getUTCHours())+":"+pad2(d.getUTCMinutes())+" UTC";}
  function localText(d){try{return d.toLocaleString(undefined,{dateStyle:"medium",timeStyle:"short"})+" ("+(Intl.DateTimeFormat().resolvedOptions().timeZone||"your time")+")";}catch(e){return d.toString();}}
  function plural(n,unit){return n+" "+unit+(n===1?"":"s");}
  function relativeText(d,now){var s=Math.round((now-d.getTime())/1000),a=Math.abs(s),past=s>=0,m=Math.round(a/60),h=Math.round(a/3600),days=Math.round(a/86400);
    if(a<45)return past?"just now":"in a moment";
    var t=a<3570?(m<1?1:m)+" min":a<86400-1800?plural(h,"hour"):null;
    if(t)return past?t+" ago":"in "+t;
    if(a<7*86400)return past?plural(days||1,"day")+" ago":"in "+plural(days||1,"day");
    try{return d.toLocaleString(undefined,{day:"numeric",month:"short",year:d.getFullYear()===new Date(now).getFullYear()?undefined:"numeric",hour:"2-digit",minute:"2-digit"});}catch(e){return utcText(d);}}
  function show(){var now=Date.now();document.querySelectorAll("time[datetime]").forEach(function(el){var d=new Date(el.getAttribute("datetime"));if(isNaN(d.getTime()))return;
    el.textContent=el.hasAttribute("data-local")?localText(d):relativeText(d,now);el.title=utcText(d)+" · "+localText(d);});}
  show();setInterval(show,60000);return show;})();
`;
