/** The channel forms: the format select applies to http(s) URLs only, so it shows for those (an empty edit field keeps the channel's own kind). */
export const CHANNELS_JS = `
  document.querySelectorAll("[data-channel-url]").forEach(function(i){
    var f=i.form&&i.form.querySelector("[data-channel-format]");if(!f)return;
    function show(){var v=i.value.trim();f.hidden=v?!/^https?:/i.test(v):i.dataset.kind!=="webhook";}
    i.addEventListener("input",show);show();
  });
`;
