declare module "*.sql" {
  const text: string;
  export default text;
}

declare module "disposable-email-domains" {
  const domains: string[];
  export default domains;
}
