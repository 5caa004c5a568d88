/* The judge pages: the new-version form's prompt preview shows its refusals. */

import { install } from "./preview.js";

install(document.body);
