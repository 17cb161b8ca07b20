// Swagger UI over the hub's OpenAPI document. "Authorize" takes a token
// (an agent's, or the admin token); it is kept in memory only.
window.SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  tryItOutEnabled: false,
});
