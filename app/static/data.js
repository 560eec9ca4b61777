// The "Your data" page: a file over ASKDB_MAX_UPLOAD_BYTES is refused here, before any byte is sent
// (the server refuses it too, from the request's length).
(function () {
  "use strict";
  document.querySelectorAll("form.upload-form").forEach((form) => {
    const input = form.querySelector("input[type=file]");
    const message = form.querySelector(".upload-too-large");
    const tooLarge = () => input.files.length > 0 && input.files[0].size > Number(form.dataset.maxBytes);
    const check = () => {
      message.hidden = !tooLarge();
      message.textContent = message.hidden ? "" : form.dataset.tooLarge;
    };
    input.addEventListener("change", check);
    form.addEventListener("submit", (event) => {
      check();
      if (tooLarge()) event.preventDefault();
    });
  });
})();
